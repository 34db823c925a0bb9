package console

import (
	"fmt"
	"strings"
	"testing"

	"github.com/msgcontract/msgcontract/codegen/model"
	"github.com/msgcontract/msgcontract/registry/compat"
)

func TestHighlight(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{`message M { string a = 1; }`, `<span class="k">message</span> M { <span class="t">string</span> a = <span class="n">1</span>; }`},
		{`// a <b> & c`, `<span class="c">// a &lt;b&gt; &amp; c</span>`},
		{`option (msgcontract.v1.event) = { topic: "x<y" };`, `<span class="k">option</span> <span class="o">(msgcontract.v1.event)</span> = { topic: <span class="s">&#34;x&lt;y&#34;</span> };`},
		{"/* über\nmulti */ enum", "<span class=\"c\">/*</span><span class=\"c\"> über</span>\n<span class=\"c\">multi */</span> <span class=\"k\">enum</span>"},
		{`export message M {}`, `<span class="k">export</span> <span class="k">message</span> M {}`},
		{`string s = 1; // ümlaut`, `<span class="t">string</span> s = <span class="n">1</span>; <span class="c">// ümlaut</span>`},
	} {
		var got []string
		for _, l := range highlight(tc.in) {
			got = append(got, string(l))
		}
		if g := strings.Join(got, "\n"); g != tc.want {
			t.Errorf("highlight(%q)\n got %s\nwant %s", tc.in, g, tc.want)
		}
	}
}

// TestDiffLines: a violation hangs under the new line it points to and
// survives folding; one in another file is returned apart.
func TestDiffLines(t *testing.T) {
	t.Parallel()
	var old, next []string
	for i := 1; i <= 30; i++ {
		old = append(old, fmt.Sprintf("line %d", i))
		next = append(next, fmt.Sprintf("line %d", i))
	}
	next[19] = "changed"
	at := func(line int, file string) compat.Violation {
		return compat.Violation{Rule: compat.Rule{ID: "R"}, Pos: model.Pos{File: file, Line: line, Col: 1}}
	}
	lines, elsewhere := diffLines(strings.Join(old, "\n"), strings.Join(next, "\n"), "f.proto",
		[]compat.Violation{at(20, "f.proto"), at(5, "f.proto"), at(3, "other.proto")})
	if len(elsewhere) != 1 || elsewhere[0].Pos.File != "other.proto" {
		t.Fatalf("elsewhere = %v", elsewhere)
	}
	var kinds []string
	hung := map[int]byte{}
	for _, l := range lines {
		kinds = append(kinds, l.Kind)
		if len(l.Violations) > 0 {
			hung[l.New] = l.Kind[0]
		}
	}
	if hung[20] != 'a' || hung[5] != 's' {
		t.Errorf("violations hang under %v, want new lines 20 (added) and 5 (unchanged)", hung)
	}
	want := "same same same same same same same same fold same same same del add same same same fold"
	if got := strings.Join(kinds, " "); got != want {
		t.Errorf("rows\n got %s\nwant %s", got, want)
	}
}
