package emit_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
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

// TestParallel: every index runs once; after an error no more start (at
// most one more per worker already under way) and the error is returned.
func TestParallel(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	seen := map[int]int{}
	if err := emit.Parallel(100, func(i int) error {
		mu.Lock()
		defer mu.Unlock()
		seen[i]++
		return nil
	}); err != nil || len(seen) != 100 {
		t.Fatalf("error %v, %d indices run", err, len(seen))
	}
	for i, n := range seen {
		if n != 1 {
			t.Fatalf("index %d ran %d times", i, n)
		}
	}
	stop := errors.New("stop")
	var calls atomic.Int32
	err := emit.Parallel(100, func(int) error {
		calls.Add(1)
		return stop
	})
	if !errors.Is(err, stop) || calls.Load() > int32(runtime.GOMAXPROCS(0)) {
		t.Fatalf("error %v after %d calls, want %v after at most %d", err, calls.Load(), stop, runtime.GOMAXPROCS(0))
	}
}

// TestPipeline: items are produced in order, never more than one per
// worker ahead of the work (a value is held from produce until its work
// ends), each is worked once with what was produced for it, and an error
// of produce stops the production and is returned.
func TestPipeline(t *testing.T) {
	t.Parallel()
	workers := runtime.GOMAXPROCS(0)
	var (
		mu                 sync.Mutex
		next, held         int
		most               int
		worked             = map[int]string{}
		producedOutOfOrder bool
	)
	err := emit.Pipeline(50, func(i int) (string, error) {
		mu.Lock()
		defer mu.Unlock()
		if i != next {
			producedOutOfOrder = true
		}
		next++
		held++
		most = max(most, held)
		return fmt.Sprint("v", i), nil
	}, func(i int, v string) error {
		mu.Lock()
		defer mu.Unlock()
		worked[i] = v
		held--
		return nil
	})
	if err != nil || producedOutOfOrder || len(worked) != 50 {
		t.Fatalf("error %v, out of order %v, %d worked", err, producedOutOfOrder, len(worked))
	}
	for i, v := range worked {
		if v != fmt.Sprint("v", i) {
			t.Fatalf("item %d worked with %q", i, v)
		}
	}
	// Held: one per worker waiting in the queue, one per worker at work,
	// and the one just produced.
	if most > 2*workers+1 {
		t.Fatalf("%d produced values held at once, want at most %d", most, 2*workers+1)
	}
	stop := errors.New("stop")
	var produced atomic.Int32
	err = emit.Pipeline(50, func(i int) (int, error) {
		produced.Add(1)
		if i == 3 {
			return 0, stop
		}
		return i, nil
	}, func(int, int) error { return nil })
	if !errors.Is(err, stop) || produced.Load() != 4 {
		t.Fatalf("error %v after %d produced, want %v after 4", err, produced.Load(), stop)
	}
}
