package generate_test

import (
	"context"
	"errors"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/msgcontract/msgcontract/codegen/emit"
	"github.com/msgcontract/msgcontract/codegen/generate"
	"github.com/msgcontract/msgcontract/codegen/golang"
	"github.com/msgcontract/msgcontract/codegen/golang/pbgo"
	"github.com/msgcontract/msgcontract/codegen/model"
	"github.com/msgcontract/msgcontract/internal/examplegen"
)

func loadExamples(t *testing.T) *model.Set {
	t.Helper()
	set, err := examplegen.Load(context.Background(), filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	generate.Lint(set)
	return set
}

// TestWithPBIsBothGenerators: --with-pb renders protoc-gen-go's files
// while the Go emitter renders its own, concurrently; the result is the
// two generators' files, sorted, each once (run with -race too).
func TestWithPBIsBothGenerators(t *testing.T) {
	t.Parallel()
	set := loadExamples(t)
	p := emit.Params{Lang: "go", Module: "github.com/msgcontract/msgcontract", Version: "v1", WithPB: true}
	got, err := generate.Run(set, p)
	if err != nil {
		t.Fatal(err)
	}
	want, err := golang.Generate(loadExamples(t), p)
	if err != nil {
		t.Fatal(err)
	}
	pb, err := pbgo.Generate(p, set.Descriptors()...)
	if err != nil {
		t.Fatal(err)
	}
	want = append(want, pb...)
	sort.Slice(want, func(i, j int) bool { return want[i].Name < want[j].Name })
	if len(got) != len(want) || len(want) != 4 {
		t.Fatalf("%d files, want %d (4)", len(got), len(want))
	}
	for i := range want {
		if got[i].Name != want[i].Name || string(got[i].Content) != string(want[i].Content) {
			t.Errorf("file %d: %s, want %s with the same content", i, got[i].Name, want[i].Name)
		}
	}
}

// TestEachStopsAtError: the first error of the caller's fn ends the run
// and is returned; no file starts rendering after it.
func TestEachStopsAtError(t *testing.T) {
	t.Parallel()
	set := loadExamples(t)
	stop := errors.New("disk full")
	var calls atomic.Int32
	err := generate.Each(set, emit.Params{Lang: "go", WithPB: true}, func(emit.File) error {
		calls.Add(1)
		return stop
	})
	if !errors.Is(err, stop) {
		t.Fatalf("error %v, want %v", err, stop)
	}
	// At most one call from each goroutine that was already under way:
	// the Go emitter's workers and protoc-gen-go's formatting workers.
	if n, most := calls.Load(), int32(2*runtime.GOMAXPROCS(0)); n > most {
		t.Fatalf("fn called %d times, want at most %d", n, most)
	}
}

// TestHeaderVersion: every language's header names the caller's version,
// and the same "(unknown)" when the caller sets none.
func TestHeaderVersion(t *testing.T) {
	t.Parallel()
	set := loadExamples(t)
	for _, lang := range generate.Langs {
		for version, want := range map[string]string{"v1.2.3": "msgcontract v1.2.3", "": "msgcontract (unknown)"} {
			files, err := generate.Run(set, emit.Params{Lang: lang, Module: "github.com/msgcontract/msgcontract", Version: version})
			if err != nil {
				t.Fatal(err)
			}
			if len(files) == 0 {
				t.Fatalf("%s: no files", lang)
			}
			for _, f := range files {
				head := string(f.Content[:min(len(f.Content), 200)])
				if !strings.Contains(head, want+"\n") {
					t.Errorf("%s %s, Version %q: header does not name %q:\n%s", lang, f.Name, version, want, head)
				}
			}
		}
	}
}
