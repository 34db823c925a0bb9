package testsummary_test

import (
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/msgcontract/msgcontract/internal/testsummary"
)

func TestSummarize(t *testing.T) {
	t.Parallel()
	mixed, err := os.ReadFile("testdata/mixed.json") // go test -json on a module with each kind of result
	if err != nil {
		t.Fatal(err)
	}
	const pass = `{"Action":"run","Package":"p","Test":"TestA"}
{"Action":"output","Package":"p","Test":"TestA","Output":"    a_test.go:9: msgcontract-suite python: 23 passed\n"}
{"Action":"pass","Package":"p","Test":"TestA"}
{"Action":"pass","Package":"p"}
`
	tests := []struct {
		name, in        string
		line            string
		okLocal, okCI   bool
		skipped, failed []string
		broken          int
		reported        map[string]string
		progress        []string
	}{
		{name: "all pass", in: pass, line: "go: 1 passed, 0 skipped, 0 failed", okLocal: true, okCI: true,
			reported: map[string]string{"python": "23 passed"}, progress: []string{"ok    p"}},
		{name: "pass, skip, fail, subtest and a package that does not build", in: string(mixed),
			line:    "go: 3 passed, 1 skipped, 1 failed, 1 packages broken",
			skipped: []string{"TestSkip"}, failed: []string{"TestFail"}, broken: 1,
			reported: map[string]string{"java": "7 tests"},
			progress: []string{"--- FAIL: TestFail (example.com/ts/a)", "boom", "FAIL  example.com/ts/a",
				"FAIL  example.com/ts/b", `cannot use "x"`}},
		{name: "a line that is not an event", in: "go: no such tool\n" + pass,
			line: "go: 1 passed, 0 skipped, 0 failed, 1 packages broken", broken: 1,
			reported: map[string]string{"python": "23 passed"}, progress: []string{"go: no such tool"}},
		{name: "only a skip: fine locally, fails under CI",
			in: `{"Action":"run","Package":"p","Test":"TestB"}
{"Action":"output","Package":"p","Test":"TestB","Output":"    b_test.go:3: buf not found\n"}
{"Action":"skip","Package":"p","Test":"TestB"}
`,
			line: "go: 0 passed, 1 skipped, 0 failed", okLocal: true, skipped: []string{"TestB"},
			reported: map[string]string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var progress strings.Builder
			res, err := testsummary.Summarize("go", strings.NewReader(tt.in), &progress)
			if err != nil {
				t.Fatal(err)
			}
			if got := res.Line(); got != tt.line {
				t.Errorf("line %q, want %q", got, tt.line)
			}
			if res.OK(false) != tt.okLocal || res.OK(true) != tt.okCI {
				t.Errorf("OK(local)=%v OK(CI)=%v, want %v %v", res.OK(false), res.OK(true), tt.okLocal, tt.okCI)
			}
			if got := names(res.Skipped); !reflect.DeepEqual(got, tt.skipped) {
				t.Errorf("skipped %v, want %v", got, tt.skipped)
			}
			if got := names(res.Failed); !reflect.DeepEqual(got, tt.failed) {
				t.Errorf("failed %v, want %v", got, tt.failed)
			}
			if len(res.Broken) != tt.broken {
				t.Errorf("broken %q, want %d", res.Broken, tt.broken)
			}
			if !reflect.DeepEqual(res.Reported, tt.reported) {
				t.Errorf("reported %v, want %v", res.Reported, tt.reported)
			}
			for _, want := range tt.progress {
				if !strings.Contains(progress.String(), want) {
					t.Errorf("progress lacks %q:\n%s", want, progress.String())
				}
			}
		})
	}
}

func TestSkipReasonKept(t *testing.T) {
	t.Parallel()
	in := `{"Action":"output","Package":"p","Test":"TestB","Output":"    b_test.go:3: buf not found\n"}
{"Action":"skip","Package":"p","Test":"TestB"}
`
	res, err := testsummary.Summarize("go", strings.NewReader(in), &strings.Builder{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Skipped) != 1 || !strings.Contains(res.Skipped[0].Output, "buf not found") {
		t.Errorf("skipped %+v, want TestB with its reason", res.Skipped)
	}
}

func names(ts []testsummary.Test) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Name)
	}
	return out
}
