package conformance

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/msgcontract/msgcontract/codegen/model"
)

// Executor runs every case of a vector file in one language.
type Executor struct {
	// Lang names the language in the closing line: conformance-<Lang>.
	Lang string
	// Run generates code for vf's protos under workDir and returns one
	// result per case, in case order.
	Run func(ctx context.Context, vf *VectorFile, workDir string) ([]Result, error)
	// MaxEdition, when set, is the newest edition the executor's protobuf
	// can compile and load (the oldest supported protobuf predates edition
	// 2024). A vector file with a newer file is not run there: the runner
	// prints why and counts its cases as not applicable, never as passed.
	MaxEdition descriptorpb.Edition
	// Toolchain says which protobuf the executor runs on, for that message.
	Toolchain string
}

// Summary counts one language's cases.
type Summary struct {
	Lang           string
	Passed, Failed int
	// NotApplicable counts the cases of vector files newer than the
	// executor's MaxEdition.
	NotApplicable int
}

// Line is the closing line the suite prints for the language.
func (s Summary) Line() string {
	line := fmt.Sprintf("conformance-%s: %d passed, %d failed", s.Lang, s.Passed, s.Failed)
	if s.NotApplicable > 0 {
		line += fmt.Sprintf(", %d not applicable", s.NotApplicable)
	}
	return line
}

// newestEdition is the newest edition among the files vf compiles, imports
// included (proto2 and proto3 count as before every edition).
func newestEdition(ctx context.Context, vf *VectorFile) (descriptorpb.Edition, error) {
	set, err := LoadModel(ctx, vf)
	if err != nil {
		return 0, err
	}
	newest := descriptorpb.Edition_EDITION_PROTO2
	set.Registry.RangeFiles(func(fd protoreflect.FileDescriptor) bool {
		newest = max(newest, model.Edition(fd))
		return true
	})
	return newest, nil
}

// LoadModel compiles vf's protos, with its proto root as the import path,
// and checks that they are free of lint errors.
func LoadModel(ctx context.Context, vf *VectorFile) (*model.Set, error) {
	files := make([]string, len(vf.Files))
	for i, f := range vf.Files {
		files[i] = filepath.Join(vf.ProtoDir, filepath.FromSlash(f))
	}
	set, err := model.Load(ctx, model.Config{ImportPaths: []string{vf.ProtoDir}}, files...)
	if err != nil {
		return nil, err
	}
	if len(set.Diagnostics) > 0 {
		return nil, fmt.Errorf("%s: the vector protos have lint errors:\n%w", vf.Path, set.Diagnostics)
	}
	return set, nil
}

// Run runs every vector file in every language, writing each failure with
// its expected and actual values to w, then one closing line per language.
// A file whose code cannot be generated, built or run fails all its cases
// in that language. workRoot holds the generated code, one directory per
// language and vector file.
func Run(ctx context.Context, w io.Writer, files []*VectorFile, executors []Executor, workRoot string) []Summary {
	return RunJobs(ctx, w, files, executors, workRoot, 1)
}

// RunJobs is Run with up to jobs executors at once (each runs its vector
// files one after the other). An executor's lines are written together when
// it ends; the closing lines come last, in executor order, as Run writes
// them. Executors share nothing but the vector files and workRoot (each
// has a directory of its own under it), so running them side by side
// changes when the lines come, not what they say.
func RunJobs(ctx context.Context, w io.Writer, files []*VectorFile, executors []Executor, workRoot string, jobs int) []Summary {
	sums := make([]Summary, len(executors))
	// Each file's newest edition, compiled once for every executor that asks.
	type editionOf struct {
		ed  descriptorpb.Edition
		err error
	}
	var edMu sync.Mutex
	editions := map[*VectorFile]editionOf{}
	newest := func(vf *VectorFile) (descriptorpb.Edition, error) {
		edMu.Lock()
		defer edMu.Unlock()
		e, ok := editions[vf]
		if !ok {
			e.ed, e.err = newestEdition(ctx, vf)
			editions[vf] = e
		}
		return e.ed, e.err
	}
	var outMu sync.Mutex
	var wg sync.WaitGroup
	slots := make(chan struct{}, max(jobs, 1))
	for i, ex := range executors {
		slots <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-slots; wg.Done() }()
			var out bytes.Buffer
			sums[i] = runExecutor(ctx, &out, files, ex, workRoot, newest)
			outMu.Lock()
			_, _ = w.Write(out.Bytes())
			outMu.Unlock()
		}()
	}
	wg.Wait()
	for _, s := range sums {
		fmt.Fprintln(w, s.Line())
	}
	return sums
}

// runExecutor runs every vector file in ex and counts its cases, writing a
// line to w for each failure and each file not applicable.
func runExecutor(ctx context.Context, w io.Writer, files []*VectorFile, ex Executor, workRoot string,
	newest func(*VectorFile) (descriptorpb.Edition, error)) Summary {
	sum := Summary{Lang: ex.Lang}
	for _, vf := range files {
		name := strings.TrimSuffix(filepath.Base(vf.Path), ".json")
		dir := filepath.Join(workRoot, ex.Lang, fmt.Sprintf("%s-%d", name, len(vf.Cases)))
		if ex.MaxEdition != 0 {
			ed, err := newest(vf)
			if err != nil {
				fmt.Fprintf(w, "FAIL conformance-%s %s: %v\n", ex.Lang, vf.Path, err)
				sum.Failed += len(vf.Cases)
				continue
			}
			if ed > ex.MaxEdition {
				fmt.Fprintf(w, "n/a  conformance-%s %s: %d cases not run: its protos use %s, which %s cannot compile or load (docs/protobuf.md)\n",
					ex.Lang, filepath.Base(vf.Path), len(vf.Cases), strings.TrimPrefix(ed.String(), "EDITION_"), ex.Toolchain)
				sum.NotApplicable += len(vf.Cases)
				continue
			}
		}
		results, err := runOne(ctx, ex, vf, dir)
		if err != nil {
			fmt.Fprintf(w, "FAIL conformance-%s %s: %v\n", ex.Lang, vf.Path, err)
			sum.Failed += len(vf.Cases)
			continue
		}
		for j, c := range vf.Cases {
			got := results[j] // runOne checked the count
			if diff := Compare(c.Expect, got); diff != "" {
				fmt.Fprintf(w, "FAIL conformance-%s %s: case %q (%s): %s\n    expected %s\n    actual   %s\n",
					ex.Lang, filepath.Base(vf.Path), c.Name, c.Kind, diff, c.Expect, got)
				sum.Failed++
				continue
			}
			sum.Passed++
		}
	}
	return sum
}

func runOne(ctx context.Context, ex Executor, vf *VectorFile, dir string) ([]Result, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	results, err := ex.Run(ctx, vf, dir)
	if err != nil {
		return nil, err
	}
	if len(results) != len(vf.Cases) {
		return nil, fmt.Errorf("executor returned %d results for %d cases", len(results), len(vf.Cases))
	}
	return results, nil
}
