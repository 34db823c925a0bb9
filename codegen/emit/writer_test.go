package emit_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/msgcontract/msgcontract/codegen/emit"
)

// TestWriterWritesConcurrently: files from many goroutines land under Dir
// with their content, folders created as needed.
func TestWriterWritesConcurrently(t *testing.T) {
	t.Parallel()
	w := &emit.Writer{Dir: t.TempDir()}
	var wg sync.WaitGroup
	errs := make([]error, 40)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := fmt.Sprintf("a/b%d/c/f%d.go", i%3, i)
			errs[i] = w.Write(emit.File{Name: name, Content: []byte(name)})
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprintf("a/b%d/c/f%d.go", i%3, i)
		got, err := os.ReadFile(filepath.Join(w.Dir, filepath.FromSlash(name)))
		if err != nil || string(got) != name {
			t.Fatalf("%s: %q, %v", name, got, err)
		}
	}
}

// TestWriterRefuses: an escaping name is refused, and a folder that cannot
// be created fails every file meant for it, not only the first.
func TestWriterRefuses(t *testing.T) {
	t.Parallel()
	w := &emit.Writer{Dir: t.TempDir()}
	if err := w.Write(emit.File{Name: "../x.go"}); err == nil {
		t.Fatal("../x.go written")
	}
	if err := os.WriteFile(filepath.Join(w.Dir, "blocked"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"blocked/a.go", "blocked/b.go"} {
		if err := w.Write(emit.File{Name: name}); err == nil {
			t.Fatalf("%s written under a file", name)
		}
	}
}
