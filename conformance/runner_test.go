package conformance_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

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
