package console

import (
	"html"
	"regexp"
	"strings"
	"testing"
)

var tag = regexp.MustCompile(`</?span[^>]*>`)

// FuzzHighlight: whatever the text, highlighting only adds spans and
// escapes; stripping them gives the text back, line for line (NUL comes
// back as U+FFFD, as html/template escapes it).
func FuzzHighlight(f *testing.F) {
	for _, s := range []string{machineProto, "/* a\nb */ c", `"unterminated`, "(opt", "ü // ß\n'x'", "a\r\nb"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		var got []string
		for _, l := range highlight(text) {
			got = append(got, html.UnescapeString(tag.ReplaceAllString(string(l), "")))
		}
		if want := strings.ReplaceAll(strings.TrimRight(text, "\n"), "\x00", "\uFFFD"); strings.Join(got, "\n") != want {
			t.Fatalf("highlight(%q) loses text: %q", text, strings.Join(got, "\n"))
		}
	})
}
