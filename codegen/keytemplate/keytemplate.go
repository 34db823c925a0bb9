// Package keytemplate parses biz_key templates such as
// "order_id:{order_id}:PAY_SUCCESS" into literal and placeholder segments.
//
// Grammar: text is copied as written, except that "{{" and "}}" stand for a
// literal "{" and "}". A placeholder is "{" path "}", where path is one or
// more proto identifiers joined by "." (a dotted path walks into singular
// sub-messages). Anything else is an error with the byte offset of the fault.
package keytemplate

import (
	"fmt"
	"strings"
)

// Segment is a literal run or a placeholder.
type Segment struct {
	// Literal is the text of a literal segment, with "{{" and "}}" already
	// unescaped. Empty for a placeholder.
	Literal string
	// Path is the placeholder's field path; nil for a literal.
	Path []string
	// Offset is the byte offset in the template where the segment starts
	// (the "{" of a placeholder); Len is its length in the template.
	Offset, Len int
}

// IsPlaceholder reports whether s is a placeholder.
func (s Segment) IsPlaceholder() bool { return s.Path != nil }

// Placeholder returns the dotted path of a placeholder.
func (s Segment) Placeholder() string { return strings.Join(s.Path, ".") }

// Error is a template syntax error at a byte offset.
type Error struct {
	Offset int
	Msg    string
}

func (e *Error) Error() string {
	return fmt.Sprintf("biz_key template at byte %d: %s", e.Offset, e.Msg)
}

// Parse splits template into segments. Adjacent literal text is merged into
// one segment.
func Parse(template string) ([]Segment, error) {
	if template == "" {
		return nil, &Error{Offset: 0, Msg: "template is empty; compose the key from the event's fields, e.g. \"order_id:{order_id}\""}
	}
	var (
		segs    []Segment
		lit     strings.Builder
		litFrom = -1
	)
	flush := func(end int) {
		if litFrom >= 0 {
			segs = append(segs, Segment{Literal: lit.String(), Offset: litFrom, Len: end - litFrom})
			lit.Reset()
			litFrom = -1
		}
	}
	addLit := func(at int, s string) {
		if litFrom < 0 {
			litFrom = at
		}
		lit.WriteString(s)
	}
	for i := 0; i < len(template); {
		c := template[i]
		switch {
		case c == '{' && i+1 < len(template) && template[i+1] == '{':
			addLit(i, "{")
			i += 2
		case c == '}' && i+1 < len(template) && template[i+1] == '}':
			addLit(i, "}")
			i += 2
		case c == '}':
			return nil, &Error{Offset: i, Msg: "unmatched \"}\"; write \"}}\" for a literal brace"}
		case c == '{':
			end := strings.IndexByte(template[i+1:], '}')
			if end < 0 {
				return nil, &Error{Offset: i, Msg: "unclosed \"{\"; close the placeholder with \"}\" or write \"{{\" for a literal brace"}
			}
			body := template[i+1 : i+1+end]
			if body == "" {
				return nil, &Error{Offset: i, Msg: "empty placeholder \"{}\"; name a field, e.g. \"{order_id}\""}
			}
			if j := strings.IndexByte(body, '{'); j >= 0 {
				return nil, &Error{Offset: i + 1 + j, Msg: "\"{\" inside a placeholder; placeholders do not nest"}
			}
			path := strings.Split(body, ".")
			off := i + 1
			for _, part := range path {
				if !isIdent(part) {
					return nil, &Error{Offset: off, Msg: fmt.Sprintf("%q is not a field name; a placeholder is a field name or a dotted path such as {customer.id}", part)}
				}
				off += len(part) + 1
			}
			flush(i)
			segs = append(segs, Segment{Path: path, Offset: i, Len: end + 2})
			i += end + 2
		default:
			addLit(i, template[i:i+1])
			i++
		}
	}
	flush(len(template))
	return segs, nil
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		letter := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_'
		if !letter && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// Format writes segments back as a template; Parse(Format(s)) yields s again
// (offsets aside).
func Format(segs []Segment) string {
	var b strings.Builder
	for _, s := range segs {
		if s.IsPlaceholder() {
			b.WriteString("{" + s.Placeholder() + "}")
			continue
		}
		b.WriteString(strings.NewReplacer("{", "{{", "}", "}}").Replace(s.Literal))
	}
	return b.String()
}
