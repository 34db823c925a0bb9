// Package emit holds what every language emitter shares: the generated
// file type and the parameters of a generation run.
package emit

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"text/template"
)

// File is one generated file.
type File struct {
	// Name is slash-separated and relative to the output directory.
	Name    string
	Content []byte
}

// Params are the generator's options, from --flags or from protoc's
// "--msgcontract_out=lang=go,paths=source_relative:DIR" parameter.
type Params struct {
	// Lang is "go", "java" or "python".
	Lang string
	// Paths is "import" (default: place files by the language's package,
	// e.g. go_package's import path) or "source_relative" (next to the
	// .proto's path).
	Paths string
	// Module strips this Go import-path prefix from output paths, as
	// protoc-gen-go's module= does.
	Module string
	// GoImportPaths maps .proto import paths to the Go import paths of
	// their packages ("a/b.proto" -> "example.com/a;apb"), overriding
	// go_package, as protoc-gen-go's M<file>=<import path> parameters do.
	GoImportPaths map[string]string
	// Version is the generator version written into file headers
	// (HeaderVersion).
	Version string
	// WithPB, Go only, also generates protoc-gen-go's .pb.go files for
	// the same contracts, with the same Paths and Module.
	WithPB bool
}

// HeaderVersion is the version every language's file header names:
// Version, or "(unknown)" when the caller set none, as protoc-gen-go
// names a protoc that did not say its version.
func (p Params) HeaderVersion() string {
	if p.Version == "" {
		return "(unknown)"
	}
	return p.Version
}

// SafeName checks that a generated file name stays inside the output
// directory: relative, no "..", no absolute or Windows-drive paths. A hostile
// go_package or java_package must never write outside --out.
func SafeName(name string) error {
	clean := path.Clean(name)
	if name == "" || path.IsAbs(name) || strings.HasPrefix(clean, "../") || clean == ".." ||
		strings.Contains(name, "\\") || strings.Contains(name, ":") {
		return fmt.Errorf("generated file name %q escapes the output directory; fix the file's go_package/java_package option", name)
	}
	return nil
}

// WriteFile writes f under dir, creating folders as needed. It checks
// f's name with SafeName again: this is the line that touches the disk.
// A run writing many files uses one Writer instead.
func WriteFile(dir string, f File) error {
	return (&Writer{Dir: dir}).Write(f)
}

// Writer writes files under Dir, from any number of goroutines at once,
// checking each name with SafeName (this is the line that touches the
// disk) and creating each folder once (a run writes hundreds of
// files into a few folders; MkdirAll per file was a seventh of generate's
// CPU).
type Writer struct {
	Dir  string
	made sync.Map // folder path -> *madeDir
}

type madeDir struct {
	once sync.Once
	err  error
}

// Write writes f under w.Dir, after SafeName accepts its name.
func (w *Writer) Write(f File) error {
	if err := SafeName(f.Name); err != nil {
		return err
	}
	path := filepath.Join(w.Dir, filepath.FromSlash(f.Name))
	v, _ := w.made.LoadOrStore(filepath.Dir(path), &madeDir{})
	d := v.(*madeDir)
	d.once.Do(func() { d.err = os.MkdirAll(filepath.Dir(path), 0o755) })
	if d.err != nil {
		return d.err
	}
	return os.WriteFile(path, f.Content, 0o644)
}

// Render executes the template name of t into a buffer of size bytes to
// start with, which saves regrowing it (and copying) while it is written;
// size is a hint, 0 is fine. An error names t (the language) and name.
func Render(t *template.Template, name string, data any, size int) ([]byte, error) {
	buf := bytes.NewBuffer(make([]byte, 0, size))
	if err := t.ExecuteTemplate(buf, name, data); err != nil {
		return nil, fmt.Errorf("%s: render %s: %w", t.Name(), name, err)
	}
	return buf.Bytes(), nil
}

// Parallel calls work(i) for every i in [0, n) on GOMAXPROCS goroutines
// (a bounded number at a time) and returns the errors joined. After the
// first error no more calls start; those under way finish.
func Parallel(n int, work func(i int) error) error {
	return Pipeline(n, func(int) (struct{}, error) { return struct{}{}, nil },
		func(i int, _ struct{}) error { return work(i) })
}

// Pipeline calls produce(i) for i = 0, 1, ... n-1 in order on the calling
// goroutine (for work that is not safe on several) and work(i, v) with
// what it produced on GOMAXPROCS goroutines. produce runs at most one item
// per worker ahead of the work, so few produced values are held at once.
// After the first error, of produce or work, no more items are produced
// or started; those under way finish. The errors are returned joined, in
// item order.
func Pipeline[T any](n int, produce func(i int) (T, error), work func(i int, v T) error) error {
	type item struct {
		i int
		v T
	}
	var (
		workers = min(runtime.GOMAXPROCS(0), n)
		failed  atomic.Bool
		errs    = make([]error, n)
		items   = make(chan item, workers)
		wg      sync.WaitGroup
	)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for it := range items {
				if failed.Load() {
					continue
				}
				if errs[it.i] = work(it.i, it.v); errs[it.i] != nil {
					failed.Store(true)
				}
			}
		}()
	}
	for i := 0; i < n && !failed.Load(); i++ {
		v, err := produce(i)
		if err != nil {
			errs[i] = err
			failed.Store(true)
			break
		}
		items <- item{i, v}
	}
	close(items)
	wg.Wait()
	return errors.Join(errs...)
}

// Collect runs each, which hands files to the function it is given (as
// generate.Each does, from any goroutine), and returns all of them sorted
// by name.
func Collect(each func(fn func(File) error) error) ([]File, error) {
	var (
		mu    sync.Mutex
		files []File
	)
	err := each(func(f File) error {
		mu.Lock()
		defer mu.Unlock()
		files = append(files, f)
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Name < files[j].Name })
	return files, nil
}
