package golang

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/msgcontract/msgcontract/codegen/emit"
	"github.com/msgcontract/msgcontract/codegen/model"
)

// matchParams are those of the goldens, and of the plugin as protoc calls
// it by default.
var matchParams = []emit.Params{
	{Lang: "go", Paths: "source_relative", Version: "(golden)"},
	{Lang: "go"},
}

// compareToJennifer renders every file of set with both emitters and
// fails where the bytes differ or gofmt would change them. It returns the number of files compared;
// a set the generator refuses compares none.
func compareToJennifer(t *testing.T, name string, set *model.Set, p emit.Params) int {
	t.Helper()
	return len(compareEach(t, name, set, p))
}

// compareEach is compareToJennifer returning the files compared.
func compareEach(t *testing.T, name string, set *model.Set, p emit.Params) [][]byte {
	t.Helper()
	r, err := Prepare(set, p)
	if err != nil {
		return nil
	}
	var out [][]byte
	for _, g := range r.gens {
		got, err := g.render()
		if err != nil {
			t.Fatalf("%s: %s: %v", name, g.model.Path, err)
		}
		want, err := jenGen{g}.render()
		if err != nil {
			t.Fatalf("%s: %s: jennifer: %v", name, g.model.Path, err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: %s differs from the jennifer emitter's output:\n%s", name, g.model.Path, firstDiff(got, want))
		}
		if err := isCanonical(got); err != nil {
			t.Errorf("%s: %s: %v", name, g.model.Path, err)
		}
		out = append(out, got)
	}
	return out
}

// firstDiff shows the first line where got and want differ.
func firstDiff(got, want []byte) string {
	g, w := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := range min(len(g), len(w)) {
		if g[i] != w[i] {
			return fmt.Sprintf("line %d:\n got  %q\n want %q", i+1, g[i], w[i])
		}
	}
	return fmt.Sprintf("%d lines, want %d", len(g), len(w))
}

// TestMatchesJennifer: for every contract in the repository (testdata and
// examples), the canonical writer emits the bytes the jennifer + go/format
// emitter emitted.
func TestMatchesJennifer(t *testing.T) {
	t.Parallel()
	roots := map[string][]string{} // import root -> files under it
	err := filepath.WalkDir(filepath.Join("..", "..", "testdata"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".proto") {
			return err
		}
		root, _, ok := strings.Cut(path, string(filepath.Separator)+"proto"+string(filepath.Separator))
		switch {
		case ok:
			root += string(filepath.Separator) + "proto"
		default:
			root = filepath.Dir(path) // testdata/compat/<case>/{cur,prev}, testdata/lint
		}
		roots[root] = append(roots[root], path)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, ex := range []string{"examples/proto"} {
		root := filepath.Join("..", "..", filepath.FromSlash(ex))
		_ = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err == nil && strings.HasSuffix(path, ".proto") {
				roots[root] = append(roots[root], path)
			}
			return err
		})
	}
	compared := 0
	for root, files := range roots {
		for _, f := range files {
			set, err := model.Load(context.Background(), model.Config{ImportPaths: []string{root}}, f)
			if err != nil || len(set.Diagnostics) > 0 {
				continue // a lint case: nothing to generate
			}
			for _, p := range matchParams {
				compared += compareToJennifer(t, f, set, p)
			}
		}
	}
	// 56 contracts that generate Go (the corpus, the edge cases, the
	// examples, conformance), twice: fewer means loading broke.
	if compared < 100 {
		t.Fatalf("compared %d files; the walk found too few contracts", compared)
	}
	t.Logf("%d files compared", compared)
}

// TestMatchesJenniferGenerated compares both emitters on contracts built
// at random from the parts where the writer has to reproduce gofmt's
// decisions: keys of very different lengths (map alignment), doc
// comments with markup (go/doc/comment), error-range names, odd string
// literals and floats, and target states in other Go packages whose
// guessed import names collide with the runtime's.
func TestMatchesJenniferGenerated(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(21, 1))
	// What the random contracts must have covered, found in the output.
	seen := map[string]*regexp.Regexp{
		"an import renamed for a collision":    regexp.MustCompile(`\n\t[a-z]+1 "`),
		"a target state in another package":    regexp.MustCompile(`TargetState = [a-z0-9]+\.Phase_`),
		"a list reformatted by go/doc/comment": regexp.MustCompile(`\n//   - `),
		"a code block in a doc comment":        regexp.MustCompile(`\n//\t`),
		"an old-style heading made new":        regexp.MustCompile(`\n// # `),
		"map keys in two alignment sections":   regexp.MustCompile(`\n\t\w{41,}: [{n]`),
		"a long key aligned with another":      regexp.MustCompile(`\n\t\w{41,}:  +[{n]`),
	}
	n := 300
	if testing.Short() {
		n = 60
	}
	for i := range n {
		srcs, files := randomContracts(rng, i)
		set, err := model.Load(context.Background(), model.Config{Sources: srcs}, files...)
		if err != nil {
			t.Fatalf("case %d: %v\n%s", i, err, srcs[files[0]])
		}
		if len(set.Diagnostics) > 0 {
			t.Fatalf("case %d: lint: %v\n%s", i, set.Diagnostics, srcs[files[0]])
		}
		for _, p := range matchParams {
			out := compareEach(t, fmt.Sprint("case ", i), set, p)
			if len(out) == 0 {
				t.Fatalf("case %d: nothing generated\n%s", i, srcs[files[0]])
			}
			for _, f := range out {
				for what, re := range seen {
					if re.Match(f) {
						delete(seen, what)
					}
				}
			}
		}
	}
	for what := range seen {
		t.Errorf("no case generated %s", what)
	}
}

// FuzzMatchesJennifer compares both emitters on a contract whose proto
// comments, error-range name and topic come from the fuzzer.
func FuzzMatchesJennifer(f *testing.F) {
	for _, s := range fuzzComments {
		f.Add(s, "5xx server-errors", "orders")
	}
	f.Add("", "ü-é", `a"b\c`)
	f.Fuzz(func(t *testing.T, doc, rangeName, topic string) {
		src := `syntax = "proto3";
package f.v1;
import "msgcontract/v1/options.proto";
option go_package = "example.com/f/v1;fv1";
` + protoComment(doc) + `enum State {
  option (msgcontract.v1.state_machine) = {};
  STATE_UNSPECIFIED = 0;
  OPEN = 1;
  DONE = 2 [(msgcontract.v1.transition) = { from: ["OPEN"] }];
}
` + protoComment(doc) + `message Paid {
  option (msgcontract.v1.event) = {
    topic: ` + protoString(topic) + ` event_type: "PAID" biz_key: "{id}"
    error_ranges: { from: 1000 to: 1999 retryable: true name: ` + protoString(rangeName) + ` }
  };
  string id = 1;
}
`
		set, err := model.Load(context.Background(), model.Config{Sources: map[string]string{"f/v1/f.proto": src}}, "f/v1/f.proto")
		if err != nil || len(set.Diagnostics) > 0 {
			return // not a valid contract (the topic or range name is refused)
		}
		if compareToJennifer(t, "fuzz", set, emit.Params{Lang: "go"}) != 1 {
			t.Fatal("no file compared")
		}
	})
}

// protoComment writes text as // lines of a .proto file.
func protoComment(text string) string {
	if text == "" {
		return ""
	}
	var b strings.Builder
	for _, l := range strings.Split(strings.ReplaceAll(text, "\r", ""), "\n") {
		b.WriteString("//" + l + "\n")
	}
	return b.String()
}

// protoString is s as a .proto string literal.
func protoString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20 || c == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// fuzzComments are .proto comments (the text after "//" of each line)
// with the markup go/doc/comment rewrites, and plain ones it does not.
var fuzzComments = []string{
	" A plain comment.",
	" Two lines of\n plain text.",
	" A paragraph.\n\n Another one.",
	" A list:\n  - one\n  - two\n * three",
	" Numbered:\n  1. one\n  2) two",
	" Code:\n\n\tx := 1\n\ty := 2",
	" Heading\n\n Text after a heading-looking line.",
	" First.\n\n Old Heading\n\n Body.",
	" # New heading\n\n Body.",
	" Links: [Foo], [pkg.Bar], [text] and https://example.com/x.\n\n [text]: https://example.com",
	" Quotes: ``quoted'' and `code`.",
	" Trailing spaces   \n\t\n   \n Blank lines above.",
	"\n\n Leading blank lines.\n\n\n\n Many blank lines.\n\n",
	" Non-breaking\u00a0space\u00a0\n\u00a0 starts a line.",
	" Tab\tinside and a line\n\twith a leading tab",
	"go:generate not a directive here\n line directive",
	" Ends with a colon:\n Next Line Ends In Word\n\n Short\n\n End",
	" ü is a letter\n\n Ünïcödé Heading\n\n Body.",
	" */ /* \"\"\" ''' ${x} #{y} @param <b>&amp;</b> %s",
	"-dash\n+plus\n*star",
}

// randomContracts builds a small random contract set: a state machine
// package and an event package whose events target its states.
func randomContracts(rng *rand.Rand, i int) (map[string]string, []string) {
	pick := func(xs ...string) string { return xs[rng.IntN(len(xs))] }
	ident := func(n int) string {
		const letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
		var b strings.Builder
		for range max(n, 1) {
			b.WriteByte(letters[rng.IntN(len(letters))])
			if rng.IntN(7) == 0 && b.Len() < n-1 {
				b.WriteByte('_')
			}
		}
		return b.String()
	}
	comment := func() string {
		if rng.IntN(3) == 0 {
			return ""
		}
		return protoComment(fuzzComments[rng.IntN(len(fuzzComments))])
	}
	// The states' Go package: its last path element is sometimes a
	// runtime package's name, a keyword or digits.
	statesPkg := pick("states", "v1", "event", "bizkey", "consumer", "classify", "outbox", "sql", "context", "func", "2fa", "x-y.z", "err")
	statesPath := "example.com/" + pick("a", "b") + "/" + statesPkg
	sameFile := rng.IntN(3) == 0

	var enum strings.Builder
	enum.WriteString(comment())
	enum.WriteString("enum Phase {\n  option (msgcontract.v1.state_machine) = {};\n")
	nValues := 1 + rng.IntN(9)
	var values []string
	seen := map[string]bool{}
	for len(values) < nValues {
		// Lengths from 1 to 70: both sides of gofmt's 40-character
		// "small key" bound.
		v := "V" + ident([]int{1, 3, 8, 20, 39, 45, 70}[rng.IntN(7)])
		if len(values) == 0 {
			v = "PHASE_UNSPECIFIED"
		}
		if seen[v] || v == "PHASE" {
			continue
		}
		seen[v] = true
		values = append(values, v)
	}
	for j, v := range values {
		fmt.Fprintf(&enum, "  %s = %d", v, j)
		// Transitions from earlier non-zero states (a later one too, at
		// times): never the zero value, never the state itself.
		if j > 1 && rng.IntN(3) > 0 {
			fmt.Fprintf(&enum, ` [(msgcontract.v1.transition) = { from: ["%s"`, values[1+rng.IntN(j-1)])
			if k := 1 + rng.IntN(len(values)-1); k != j && rng.IntN(2) == 0 {
				fmt.Fprintf(&enum, `, "%s"`, values[k])
			}
			enum.WriteString("] }]")
		}
		enum.WriteString(";\n")
	}
	enum.WriteString("}\n")

	statesProto := "" // how the events name the enum
	if !sameFile {
		statesProto = "s.v1."
	}
	var events strings.Builder
	// File defaults: error ranges whose names make constant names.
	var ranges []string
	for k := range rng.IntN(4) {
		ranges = append(ranges, fmt.Sprintf("error_ranges: { from: %d to: %d retryable: %v name: %s }",
			1000*(k+1), 1000*(k+1)+999, rng.IntN(2) == 0,
			protoString(pick("system", "5xx", "rate-limit", "ü", "type", "a", "A", "a1", "-", "a very long range name that wraps the comment line of the constant block at seventy-six"))))
	}
	events.WriteString("option (msgcontract.v1.defaults) = { " + strings.Join(ranges, " ") + " };\n")
	nEvents := 1 + rng.IntN(3)
	for j := range nEvents {
		events.WriteString(comment())
		fmt.Fprintf(&events, "message Ev%d {\n  option (msgcontract.v1.event) = {\n", j)
		fmt.Fprintf(&events, "    topic: %s event_type: \"EV%d\"\n", protoString(pick("orders", "a\"b", "ü-topic", "x y", "t\\u")), j)
		fmt.Fprintf(&events, "    biz_key: %s\n", protoString(pick("{id}", "{id}:{n}", "{sub.id}-{opt}", "k={flag}|{e}|{u}", "- {id} - {n}")))
		if len(values) > 1 && rng.IntN(4) > 0 {
			fmt.Fprintf(&events, "    target_state: \"%sPhase.%s\"\n", statesProto, values[1+rng.IntN(len(values)-1)])
		}
		if rng.IntN(2) == 0 {
			fmt.Fprintf(&events, "    retry: { multiplier: %s max_retries: %d base_delay: \"1.5s\" }\n",
				pick("1.5", "2", "3.25", "1e3", "1.0000001", "100000000000000000000000"), rng.IntN(9))
		}
		events.WriteString("  };\n  string id = 1;\n  int32 n = 2;\n  Sub sub = 3;\n  optional uint32 opt = 4;\n  bool flag = 5;\n  E e = 6;\n  fixed32 u = 7;\n}\n")
	}
	events.WriteString("message Sub { string id = 1; }\nenum E { E_UNSPECIFIED = 0; E_ONE = 1; }\n")

	header := func(pkg, goPkg string) string {
		return "syntax = \"proto3\";\npackage " + pkg + ";\nimport \"msgcontract/v1/options.proto\";\noption go_package = \"" + goPkg + "\";\n"
	}
	if sameFile {
		return map[string]string{"r/v1/r.proto": header("r.v1", statesPath) + enum.String() + events.String()}, []string{"r/v1/r.proto"}
	}
	states := header("s.v1", statesPath) + enum.String()
	evs := header("r.v1", "example.com/r/v1;rv1") + "import \"s/v1/s.proto\";\n" +
		events.String()
	return map[string]string{"s/v1/s.proto": states, "r/v1/r.proto": evs}, []string{"r/v1/r.proto", "s/v1/s.proto"}
}

// BenchmarkRender renders the edge and example contracts with the writer
// and with the jennifer reference (go test -bench Render -benchmem).
func BenchmarkRender(b *testing.B) {
	var gens []*fileGen
	for _, tc := range [][]string{
		{"../../examples/proto", "shop/payment/v1/payment.proto", "shop/inventory/v1/inventory.proto"},
		{"../../testdata/codegen/proto", "edge/keys/v1/keys.proto", "edge/keys/v1/states.proto", "edge/legacy/v1/legacy.proto"},
	} {
		var files []string
		for _, f := range tc[1:] {
			files = append(files, filepath.Join(tc[0], f))
		}
		set, err := model.Load(context.Background(), model.Config{ImportPaths: []string{tc[0]}}, files...)
		if err != nil {
			b.Fatal(err)
		}
		r, err := Prepare(set, matchParams[0])
		if err != nil {
			b.Fatal(err)
		}
		gens = append(gens, r.gens...)
	}
	for _, e := range []struct {
		name   string
		render func(*fileGen) ([]byte, error)
	}{
		{"writer", (*fileGen).render},
		{"jennifer", func(g *fileGen) ([]byte, error) { return jenGen{g}.render() }},
	} {
		b.Run(e.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				for _, g := range gens {
					if _, err := e.render(g); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
