package conformance_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/msgcontract/msgcontract/conformance"
)

func ptr[T any](v T) *T { return &v }

func TestRunReportsFailuresAndClosingLines(t *testing.T) {
	t.Parallel()
	vf := &conformance.VectorFile{Path: "x.json", Cases: []conformance.Case{
		{Name: "ok", Kind: conformance.KindBizKey, Expect: conformance.Result{BizKey: ptr("a")}},
		{Name: "bad", Kind: conformance.KindBackoff, Expect: conformance.Result{DelayMs: ptr(int64(1500))}},
	}}
	right := func(context.Context, *conformance.VectorFile, string) ([]conformance.Result, error) {
		return []conformance.Result{{BizKey: ptr("a")}, {DelayMs: ptr(int64(1500)), DeadLetter: ptr(false)}}, nil
	}
	wrong := func(context.Context, *conformance.VectorFile, string) ([]conformance.Result, error) {
		return []conformance.Result{{BizKey: ptr("a")}, {DelayMs: ptr(int64(1499))}}, nil
	}
	broken := func(context.Context, *conformance.VectorFile, string) ([]conformance.Result, error) {
		return nil, errors.New("javac failed")
	}
	var out bytes.Buffer
	sums := conformance.Run(context.Background(), &out, []*conformance.VectorFile{vf}, []conformance.Executor{
		{Lang: "go", Run: right}, {Lang: "java", Run: wrong}, {Lang: "python", Run: broken},
	}, t.TempDir())
	text := out.String()
	for _, want := range []string{
		"conformance-go: 2 passed, 0 failed\n",
		"conformance-java: 1 passed, 1 failed\n",
		"conformance-python: 0 passed, 2 failed\n",
		`case "bad" (backoff): delay_ms: want 1500, got 1499`,
		"javac failed",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	if sums[1].Failed != 1 || sums[2].Failed != 2 {
		t.Errorf("summaries = %+v", sums)
	}
}

func TestRunCountsShortResultsAsFailures(t *testing.T) {
	t.Parallel()
	vf := &conformance.VectorFile{Path: "x.json", Cases: []conformance.Case{
		{Name: "a", Kind: conformance.KindTransition, Expect: conformance.Result{Result: ptr("ALLOWED")}},
	}}
	none := func(context.Context, *conformance.VectorFile, string) ([]conformance.Result, error) { return nil, nil }
	var out bytes.Buffer
	sums := conformance.Run(context.Background(), &out, []*conformance.VectorFile{vf},
		[]conformance.Executor{{Lang: "go", Run: none}}, t.TempDir())
	if sums[0].Failed != 1 {
		t.Errorf("summary = %+v, output:\n%s", sums[0], out.String())
	}
}

// LoadFile refuses a case whose expect is empty (it would pass whatever
// an executor answered), a decision, handler_calls or txcheck case without
// what it runs on, and a malformed txcheck case.
func TestLoadFileRejectsCasesThatCheckNothing(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ cases, want string }{
		{`{"name": "a", "kind": "classify", "message": "m.M", "code": 1, "expect": {}}`, `case "a" has an empty "expect"`},
		{`{"name": "b", "kind": "classify", "message": "m.M", "code": 1}`, `case "b" has an empty "expect"`},
		{`{"name": "c", "kind": "decision", "message": "m.M", "outcome": "maybe", "expect": {"decision": "ack"}}`,
			`has outcome "maybe"`},
		{`{"name": "d", "kind": "decision", "message": "m.M", "outcome": "ok", "chain": {"replay_count": 0, "attempt": 1, "delivery_id": "x"}, "expect": {"decision": "ack"}}`,
			`has a chain but no "delivery_id"`},
		{`{"name": "e", "kind": "handler_calls", "message": "m.M", "expect": {"handler_calls": []}}`,
			`needs "message" and "batch"`},
		{`{"name": "f", "kind": "handler_calls", "message": "m.M", "batch": ["ok", "flaky"], "expect": {"handler_calls": [1, 1]}}`,
			`has batch member "flaky"`},
		{`{"name": "t1", "kind": "txcheck", "message_id": "a", "now_ms": 1, "unresolved_ms": 60000, "expect": {"answer": "UNKNOWN"}}`,
			`needs "stored_ms", "now_ms" and "unresolved_ms"`},
		{`{"name": "t2", "kind": "txcheck", "message_id": "a", "stored_ms": 0, "now_ms": 1, "unresolved_ms": 0, "expect": {"answer": "UNKNOWN"}}`,
			`has unresolved_ms 0; want a window above 0`},
		{`{"name": "t3", "kind": "txcheck", "message_id": "a", "stored_ms": -1, "now_ms": 1, "unresolved_ms": 1, "expect": {"answer": "UNKNOWN"}}`,
			`has stored_ms -1 and now_ms 1`},
		{`{"name": "t4", "kind": "txcheck", "recorded": true, "stored_ms": 0, "now_ms": 1, "unresolved_ms": 1, "expect": {"answer": "COMMIT"}}`,
			`is "recorded" with no "message_id"`},
		{`{"name": "t5", "kind": "txcheck", "message_id": "a", "stored_ms": 0, "now_ms": 1, "unresolved_ms": 1, "expect": {"answer": "commit"}}`,
			`expects answer "commit"`},
		{`{"name": "t6", "kind": "txcheck", "message": "m.M", "message_id": "a", "stored_ms": 0, "now_ms": 1, "unresolved_ms": 1, "expect": {"answer": "UNKNOWN"}}`,
			`(txcheck) names a message`},
		{`{"name": "t7", "kind": "txcheck", "message_id": "a", "other_recorded": ["b", "a"], "stored_ms": 0, "now_ms": 1, "unresolved_ms": 1, "expect": {"answer": "COMMIT"}}`,
			`has its own message id "a" in "other_recorded"`},
		{`{"name": "t8", "kind": "txcheck", "message_id": "a", "other_recorded": ["b", "b"], "stored_ms": 0, "now_ms": 1, "unresolved_ms": 1, "expect": {"answer": "UNKNOWN"}}`,
			`has "b" in "other_recorded" twice`},
		{`{"name": "t9", "kind": "txcheck", "message_id": "a", "other_recorded": [""], "stored_ms": 0, "now_ms": 1, "unresolved_ms": 1, "expect": {"answer": "UNKNOWN"}}`,
			`has an empty message id in "other_recorded"`},
		{`{"name": "t10", "kind": "txcheck", "message_id": "a", "stored_ms": 0, "now_ms": 1, "unresolved_ms": 1, "expect": {}}`,
			`case "t10" has an empty "expect"`},
	} {
		path := filepath.Join(t.TempDir(), "v.json")
		if err := os.WriteFile(path, []byte(`{"proto_root": "proto", "files": [], "cases": [`+tc.cases+`]}`), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := conformance.LoadFile(path)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("LoadFile(%s) = %v, want an error containing %q", tc.cases, err, tc.want)
		}
	}
	// An expect of an empty list still expects something; a txcheck case
	// with an empty message id, a clock that went backwards and every
	// time at 0 is well formed.
	for _, ok := range []string{
		`{"name": "g", "kind": "handler_calls", "message": "m.M", "batch": ["ok"], "expect": {"handler_calls": [1]}}`,
		`{"name": "h", "kind": "txcheck", "message_id": "", "stored_ms": 5, "now_ms": 0, "unresolved_ms": 1, "expect": {"answer": "ROLLBACK", "deadline_ms": 5}}`,
		`{"name": "i", "kind": "txcheck", "message_id": "a", "stored_ms": 0, "now_ms": 0, "unresolved_ms": 1, "expect": {"deadline_ms": 0}}`,
	} {
		path := filepath.Join(t.TempDir(), "v.json")
		if err := os.WriteFile(path, []byte(`{"proto_root": "proto", "files": [], "cases": [`+ok+`]}`), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := conformance.LoadFile(path); err != nil {
			t.Errorf("LoadFile(%s): %v", ok, err)
		}
	}
}

// An executor whose protobuf predates a vector file's edition does not run
// it: its cases are counted as not applicable, with the reason printed,
// while an executor without a limit runs them.
func TestRunSkipsFilesNewerThanAnExecutorsEdition(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := "edition = \"2023\";\npackage e.v1;\nmessage M { string s = 1; }\n"
	if err := os.WriteFile(filepath.Join(dir, "e.proto"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	vf := &conformance.VectorFile{Path: "e.json", ProtoDir: dir, Files: []string{"e.proto"}, Cases: []conformance.Case{
		{Name: "a", Kind: conformance.KindBizKey, Expect: conformance.Result{BizKey: ptr("a")}},
		{Name: "b", Kind: conformance.KindBizKey, Expect: conformance.Result{BizKey: ptr("b")}},
	}}
	ran := 0
	answer := func(context.Context, *conformance.VectorFile, string) ([]conformance.Result, error) {
		ran++
		return []conformance.Result{{BizKey: ptr("a")}, {BizKey: ptr("b")}}, nil
	}
	var out bytes.Buffer
	sums := conformance.Run(context.Background(), &out, []*conformance.VectorFile{vf}, []conformance.Executor{
		{Lang: "newest", Run: answer},
		{Lang: "oldest", Run: answer, MaxEdition: descriptorpb.Edition_EDITION_PROTO3, Toolchain: "protobuf 1.0"},
	}, t.TempDir())
	text := out.String()
	for _, want := range []string{
		"conformance-newest: 2 passed, 0 failed\n",
		"conformance-oldest: 0 passed, 0 failed, 2 not applicable\n",
		"n/a  conformance-oldest e.json: 2 cases not run: its protos use 2023, which protobuf 1.0 cannot compile or load",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	if ran != 1 || sums[1].NotApplicable != 2 || sums[1].Passed != 0 {
		t.Errorf("ran %d times, summaries %+v", ran, sums)
	}
}

// RunJobs runs executors side by side: two that each wait for the other to
// have started can only both finish when they run at once. Each one's lines
// stay together and the closing lines keep the executors' order.
func TestRunJobsRunsExecutorsSideBySideAndKeepsTheirLinesTogether(t *testing.T) {
	t.Parallel()
	vf1 := &conformance.VectorFile{Path: "a.json", Cases: []conformance.Case{
		{Name: "c", Kind: conformance.KindBizKey, Expect: conformance.Result{BizKey: ptr("a")}}}}
	vf2 := &conformance.VectorFile{Path: "b.json", Cases: vf1.Cases}
	started := map[string]chan struct{}{"one": make(chan struct{}), "two": make(chan struct{})}
	other := map[string]string{"one": "two", "two": "one"}
	exec := func(lang string) func(context.Context, *conformance.VectorFile, string) ([]conformance.Result, error) {
		var once bool
		return func(ctx context.Context, vf *conformance.VectorFile, _ string) ([]conformance.Result, error) {
			if !once {
				once = true
				close(started[lang])
				select {
				case <-started[other[lang]]:
				case <-time.After(10 * time.Second):
					return nil, errors.New(lang + " ran alone")
				}
			}
			return []conformance.Result{{BizKey: ptr("wrong-" + lang)}}, nil
		}
	}
	var out bytes.Buffer
	sums := conformance.RunJobs(context.Background(), &out, []*conformance.VectorFile{vf1, vf2},
		[]conformance.Executor{{Lang: "one", Run: exec("one")}, {Lang: "two", Run: exec("two")}}, t.TempDir(), 2)
	if sums[0].Failed != 2 || sums[1].Failed != 2 || strings.Contains(out.String(), "ran alone") {
		t.Fatalf("summaries %+v\n%s", sums, out.String())
	}
	var langs []string
	for _, line := range strings.Split(out.String(), "\n") {
		if strings.HasPrefix(line, "FAIL conformance-") {
			langs = append(langs, strings.Fields(line)[1])
		}
	}
	if len(langs) != 4 || langs[0] != langs[1] || langs[2] != langs[3] || langs[0] == langs[2] {
		t.Errorf("the failure lines of one executor are not together: %v\n%s", langs, out.String())
	}
	if !strings.HasSuffix(out.String(), "conformance-one: 0 passed, 2 failed\nconformance-two: 0 passed, 2 failed\n") {
		t.Errorf("closing lines out of order:\n%s", out.String())
	}
}
