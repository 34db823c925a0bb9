// Package ddl serves the runtime's CREATE statements from their one home,
// contracts/sql/<dialect>.sql, which the Java and Python runtimes read too.
// Go cannot embed a file outside its module, so `make sql`
// (internal/tools/gensql) copies the files into ddl_gen.go, and a test of
// the tool module fails when that copy is stale.
//
// A file is a list of sections, one per table, in the order they are
// created: a "-- table: <name>" line starts one; each statement ends with
// ";" at the end of a line; other lines starting with "--" are comments.
// "{{<name>}}" stands for the name a runtime gives the table <name> (see
// Statements).
package ddl

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/msgcontract/msgcontract/runtime-go/sqldb"
)

// Section is one table's statements, as the file holds them.
type Section struct {
	// Table is the table's default name.
	Table string
	// Statements are in file order, without their ";", each on one line,
	// with their {{name}} placeholders.
	Statements []string
}

const tableHeader = "-- table: "

// Parse splits a file's text into its sections.
func Parse(text string) ([]Section, error) {
	var secs []Section
	var stmt []string
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, tableHeader):
			if len(stmt) > 0 {
				return nil, fmt.Errorf("ddl: line %d: a statement before it has no \";\"", i+1)
			}
			secs = append(secs, Section{Table: strings.TrimSpace(strings.TrimPrefix(line, tableHeader))})
		case line == "" || strings.HasPrefix(line, "--"):
		case len(secs) == 0:
			return nil, fmt.Errorf("ddl: line %d: a statement before the first %q line", i+1, tableHeader)
		default:
			stmt = append(stmt, line)
			if strings.HasSuffix(line, ";") {
				s := strings.TrimSpace(strings.TrimSuffix(strings.Join(stmt, " "), ";"))
				secs[len(secs)-1].Statements = append(secs[len(secs)-1].Statements, s)
				stmt = nil
			}
		}
	}
	if len(stmt) > 0 {
		return nil, fmt.Errorf("ddl: the last statement has no \";\"")
	}
	return secs, nil
}

// File returns the sections of the dialect's file.
func File(d sqldb.Dialect) ([]Section, error) {
	text, ok := files[d.String()]
	if !ok {
		return nil, fmt.Errorf("ddl: no file for dialect %v", d)
	}
	return Parse(text)
}

var placeholder = regexp.MustCompile(`\{\{([A-Za-z0-9_]*)\}\}`)

// Statements returns the statements that create tables on d, ready to run
// in order. names maps a table's default name to the name to give it;
// a table not in names keeps its default name.
func Statements(d sqldb.Dialect, names map[string]string, tables ...string) ([]string, error) {
	secs, err := File(d)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, t := range tables {
		i := sectionIndex(secs, t)
		if i < 0 {
			return nil, fmt.Errorf("ddl: contracts/sql/%v.sql has no table %s", d, t)
		}
		for _, s := range secs[i].Statements {
			var bad error
			s = placeholder.ReplaceAllStringFunc(s, func(m string) string {
				name := m[2 : len(m)-2]
				if sectionIndex(secs, name) < 0 {
					bad = fmt.Errorf("ddl: contracts/sql/%v.sql: %s names no table of the file", d, m)
				}
				if n, ok := names[name]; ok {
					return n
				}
				return name
			})
			if bad != nil {
				return nil, bad
			}
			out = append(out, s)
		}
	}
	return out, nil
}

func sectionIndex(secs []Section, table string) int {
	for i, s := range secs {
		if s.Table == table {
			return i
		}
	}
	return -1
}
