package mysqldb

import (
	"database/sql/driver"
	"fmt"
	"strings"
)

// placeholder is one $N found by scan: its byte range in the statement
// and N.
type placeholder struct {
	start, end, n int
}

// scan finds the $N placeholders of q outside string literals, quoted
// identifiers and comments, as MySQL lexes them: '...' and "..." with
// backslash escapes and doubled quotes, `...`, "-- " and "#" to the end of
// the line, and /* ... */. A $ inside or right after an identifier
// (MySQL allows $ in identifiers) is not a placeholder, nor is $N followed
// by an identifier character. It also reports whether q has a ? outside
// them.
func scan(q string) (ps []placeholder, question bool) {
	isIdent := func(c byte) bool {
		return c == '_' || c == '$' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
	}
	for i := 0; i < len(q); {
		c := q[i]
		switch {
		case c == '\'' || c == '"' || c == '`':
			i++
			for i < len(q) {
				if q[i] == '\\' && c != '`' {
					i += 2
					continue
				}
				if q[i] == c {
					// A doubled quote continues the literal: the next
					// iteration of the outer loop starts a new one.
					break
				}
				i++
			}
			i++ // the closing quote (or past the end)
		case c == '#' || c == '-' && strings.HasPrefix(q[i:], "--") && (i+2 == len(q) || q[i+2] <= ' '):
			for i < len(q) && q[i] != '\n' {
				i++
			}
		case c == '/' && strings.HasPrefix(q[i:], "/*"):
			end := strings.Index(q[i+2:], "*/")
			if end < 0 {
				return ps, question
			}
			i += 2 + end + 2
		case c == '?':
			question = true
			i++
		case c == '$' && (i == 0 || !isIdent(q[i-1])) && i+1 < len(q) && q[i+1] >= '1' && q[i+1] <= '9':
			j, n := i+1, 0
			for j < len(q) && q[j] >= '0' && q[j] <= '9' && n < 1<<16 {
				n = n*10 + int(q[j]-'0')
				j++
			}
			if j < len(q) && isIdent(q[j]) {
				i = j
				continue
			}
			ps = append(ps, placeholder{i, j, n})
			i = j
		case isIdent(c):
			for i < len(q) && isIdent(q[i]) {
				i++
			}
		default:
			i++
		}
	}
	return ps, question
}

// Rebind rewrites a statement written with PostgreSQL-style $1, $2, ...
// placeholders into MySQL's positional ?, and returns for each ? (in
// order) the N of the $N it replaced: "$2 ... $1 ... $2" becomes
// "? ... ? ... ?" with order [2 1 2]. A statement without $N placeholders
// is returned unchanged with a nil order; one that mixes $N and ? is an
// error.
func Rebind(q string) (string, []int, error) {
	ps, question := scan(q)
	if len(ps) == 0 {
		return q, nil, nil
	}
	if question {
		return "", nil, fmt.Errorf("mysqldb: statement mixes $N and ? placeholders: %.80q", q)
	}
	var b strings.Builder
	b.Grow(len(q))
	order := make([]int, len(ps))
	last := 0
	for i, p := range ps {
		b.WriteString(q[last:p.start])
		b.WriteByte('?')
		order[i] = p.n
		last = p.end
	}
	b.WriteString(q[last:])
	return b.String(), order, nil
}

// reorder gives the arguments of a rebound statement: one per ?, the
// $N's argument for each, numbered from 1.
func reorder(order []int, args []driver.NamedValue) ([]driver.NamedValue, error) {
	if order == nil {
		return args, nil
	}
	byN := make(map[int]driver.NamedValue, len(args))
	for _, a := range args {
		if a.Name != "" {
			return nil, fmt.Errorf("mysqldb: named argument %q: use $N placeholders with positional arguments", a.Name)
		}
		byN[a.Ordinal] = a
	}
	out := make([]driver.NamedValue, len(order))
	for i, n := range order {
		a, ok := byN[n]
		if !ok {
			return nil, fmt.Errorf("mysqldb: statement refers to $%d but has %d arguments", n, len(args))
		}
		out[i] = driver.NamedValue{Ordinal: i + 1, Value: a.Value}
	}
	return out, nil
}
