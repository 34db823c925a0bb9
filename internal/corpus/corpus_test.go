//go:build corpus

package corpus_test

import (
	"context"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/msgcontract/msgcontract/internal/corpus"
)

// imported are corpus files that are only imported, never named, so that
// resolution through imports is what the corpus exercises.
var imported = map[string]bool{"corpus/xstates/v1/xstates.proto": true}

// TestCorpus: every edge contract under testdata/corpus passes lint, and
// its Go, Java and Python build cleanly and agree with the model on every
// derived case.
func TestCorpus(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", "..", "testdata", "corpus", "proto"))
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".proto") {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if !imported[filepath.ToSlash(rel)] {
			files = append(files, filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 40 {
		t.Fatalf("corpus has %d contracts, want at least 40", len(files))
	}
	ctx := context.Background()
	set, err := corpus.Lint(ctx, root, files...)
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Diagnostics) > 0 {
		t.Fatalf("lint rejects the corpus:\n%v", set.Diagnostics)
	}
	cases, err := corpus.Vectors(set)
	if err != nil {
		t.Fatal(err)
	}
	report, err := corpus.Check(ctx, javaTools, root, files, cases, t.TempDir())
	t.Logf("%d contracts, %d cases\n%s", len(files), len(cases), tail(report, 400))
	if err != nil {
		t.Fatal(err)
	}
}

// tail keeps the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = append([]string{"..."}, lines[len(lines)-n:]...)
	}
	return strings.Join(lines, "\n")
}
