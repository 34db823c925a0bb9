package emit

import (
	"strings"
	"testing"
	"text/template"
)

func TestRender(t *testing.T) {
	tmpl := template.Must(template.New("java").Parse(`{{define "ok"}}class {{.}} {}{{end}}{{define "bad"}}{{.Missing}}{{end}}`))
	for _, size := range []int{0, 4, 1 << 10} {
		out, err := Render(tmpl, "ok", "Payment", size)
		if err != nil || string(out) != "class Payment {}" {
			t.Fatalf("size %d: %q, %v", size, out, err)
		}
	}
	_, err := Render(tmpl, "bad", "Payment", 0)
	if err == nil || !strings.HasPrefix(err.Error(), "java: render bad: ") {
		t.Fatalf("bad template: %v, want an error naming the language and the template", err)
	}
	if _, err := Render(tmpl, "absent", nil, 0); err == nil || !strings.Contains(err.Error(), "java: render absent") {
		t.Fatalf("absent template: %v", err)
	}
}
