package examplegen

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestCommittedExampleCodeIsFresh fails when examples/gen differs from what
// `make examples-gen` would write now.
func TestCommittedExampleCodeIsFresh(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..")
	files, err := Files(context.Background(), root)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 4 {
		t.Fatalf("only %d files generated", len(files))
	}
	for _, f := range files {
		path := filepath.Join(root, filepath.FromSlash(f.Name))
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run make examples-gen)", err)
		}
		if string(got) != string(f.Content) {
			t.Errorf("%s is stale: run make examples-gen and commit the result", path)
		}
	}
}
