package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/msgcontract/msgcontract/registry/compat"
)

// jsonViolation is one violation in `breaking --format json`.
type jsonViolation struct {
	File     string `json:"file"`
	Line     int    `json:"line"`
	Column   int    `json:"column"`
	Rule     string `json:"rule"`
	Category string `json:"category"`
	Element  string `json:"element"`
	Message  string `json:"message"`
	// Previous: the position is in the previous version (the element was
	// deleted with its parent or file).
	Previous bool `json:"previous,omitempty"`
	// Against is the index of the compared version, oldest first.
	Against int `json:"against"`
}

type jsonReport struct {
	Level      compat.Level    `json:"level"`
	Violations []jsonViolation `json:"violations"`
	Total      int             `json:"total"`
	ByCategory map[string]int  `json:"by_category"`
}

// printViolations writes vs as text lines or one JSON document.
func printViolations(w io.Writer, format string, level compat.Level, vs []compat.Violation) error {
	if format != "json" {
		for _, v := range vs {
			fmt.Fprintln(w, v)
		}
		return nil
	}
	rep := jsonReport{Level: level, Violations: []jsonViolation{}, Total: len(vs), ByCategory: byCategory(vs)}
	for _, v := range vs {
		rep.Violations = append(rep.Violations, jsonViolation{File: v.Pos.File, Line: v.Pos.Line, Column: v.Pos.Col, Rule: v.Rule.ID,
			Category: string(v.Rule.Category), Element: v.Element, Message: v.Message, Previous: v.Previous, Against: v.Against})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}

func byCategory(vs []compat.Violation) map[string]int {
	m := map[string]int{}
	for _, v := range vs {
		m[string(v.Rule.Category)]++
	}
	return m
}

// summary is "N breaking changes at level L (2 WIRE, 1 JSON)".
func summary(level compat.Level, vs []compat.Violation) string {
	if len(vs) == 0 {
		return fmt.Sprintf("no breaking changes at level %s", level)
	}
	m := byCategory(vs)
	cats := make([]string, 0, len(m))
	for c := range m {
		cats = append(cats, c)
	}
	sort.Strings(cats)
	parts := make([]string, len(cats))
	for i, c := range cats {
		parts[i] = fmt.Sprintf("%d %s", m[c], c)
	}
	return fmt.Sprintf("%d breaking change%s at level %s (%s)", len(vs), Plural(len(vs)), level, strings.Join(parts, ", "))
}
