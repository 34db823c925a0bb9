package model

import (
	"fmt"
	"sort"
	"strings"
)

// Pos is a position in a source file: 1-based line and column (columns count
// characters, tabs advance to the next multiple of 8, as protoc does).
type Pos struct {
	File      string
	Line, Col int
}

func (p Pos) String() string {
	if p.Line <= 0 {
		return p.File
	}
	return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col)
}

// Diagnostic is one contract-rule violation.
type Diagnostic struct {
	Pos Pos
	// Rule is a stable ID such as BIZKEY_FIELD_TYPE.
	Rule    string
	Message string
}

func (d Diagnostic) String() string { return fmt.Sprintf("%s: %s: %s", d.Pos, d.Rule, d.Message) }

// Diagnostics is a list of violations; as an error it prints one per line.
type Diagnostics []Diagnostic

func (ds Diagnostics) Error() string {
	lines := make([]string, len(ds))
	for i, d := range ds {
		lines[i] = d.String()
	}
	return strings.Join(lines, "\n")
}

// Sort orders diagnostics by file, line and column.
func (ds Diagnostics) Sort() {
	sort.SliceStable(ds, func(i, j int) bool {
		a, b := ds[i].Pos, ds[j].Pos
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Col < b.Col
	})
}

// CompileError is a failure to parse or link the .proto files: syntax
// errors, missing imports, unknown types. Each entry is positioned.
type CompileError struct {
	Errors []string
}

func (e *CompileError) Error() string { return strings.Join(e.Errors, "\n") }
