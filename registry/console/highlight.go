package console

import (
	"html/template"
	"strings"
)

// protoKeywords are highlighted as keywords; scalar types as types.
var (
	protoKeywords = words("syntax edition package import public weak export local option message enum service rpc returns stream oneof map reserved extensions extend to max optional required repeated true false")
	protoTypes    = words("double float int32 int64 uint32 uint64 sint32 sint64 fixed32 fixed64 sfixed32 sfixed64 bool string bytes")
)

func words(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

// highlight splits .proto text into lines of escaped HTML with spans of
// class k (keyword), t (scalar type), s (string), n (number), c (comment)
// and o (option names in parentheses). Block comments spanning lines are
// closed and reopened at each line break so every line stands alone.
func highlight(text string) []template.HTML {
	var (
		out     []template.HTML
		b       strings.Builder
		inBlock bool
	)
	span := func(class, s string) {
		b.WriteString(`<span class="` + class + `">`)
		b.WriteString(template.HTMLEscapeString(s))
		b.WriteString(`</span>`)
	}
	for _, line := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		b.Reset()
		i := 0
		for i < len(line) {
			ch := line[i]
			switch {
			case inBlock:
				end := strings.Index(line[i:], "*/")
				if end < 0 {
					span("c", line[i:])
					i = len(line)
					continue
				}
				span("c", line[i:i+end+2])
				i += end + 2
				inBlock = false
			case strings.HasPrefix(line[i:], "//"):
				span("c", line[i:])
				i = len(line)
			case strings.HasPrefix(line[i:], "/*"):
				inBlock = true
				span("c", "/*")
				i += 2
			case ch == '"' || ch == '\'':
				j := i + 1
				for j < len(line) && line[j] != ch {
					if line[j] == '\\' {
						j++
					}
					j++
				}
				j = min(j+1, len(line))
				span("s", line[i:j])
				i = j
			case ch == '(' && i+1 < len(line) && isIdent(rune(line[i+1])):
				j := strings.IndexByte(line[i:], ')')
				if j < 0 {
					b.WriteString("(")
					i++
					continue
				}
				span("o", line[i:i+j+1])
				i += j + 1
			case isIdent(rune(ch)):
				j := i
				for j < len(line) && (isIdent(rune(line[j])) || line[j] == '.') {
					j++
				}
				w := line[i:j]
				switch {
				case '0' <= ch && ch <= '9':
					span("n", w)
				case protoKeywords[w]:
					span("k", w)
				case protoTypes[w]:
					span("t", w)
				default:
					b.WriteString(template.HTMLEscapeString(w))
				}
				i = j
			default:
				j := i + 1
				for j < len(line) && !strings.ContainsRune(`/"'(`, rune(line[j])) && !isIdent(rune(line[j])) {
					j++
				}
				b.WriteString(template.HTMLEscapeString(line[i:j]))
				i = j
			}
		}
		out = append(out, template.HTML(b.String())) //nolint:gosec // every run of source text above is escaped
	}
	return out
}

// isIdent reports ASCII identifier and number characters; other bytes,
// UTF-8 included, pass through as plain text.
func isIdent(r rune) bool {
	return r == '_' || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') || ('0' <= r && r <= '9')
}
