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

// imported says which corpus files are only imported, never named, so that
// resolution through imports is what the corpus exercises: xstates, and
// the 64 small files of corpus/fanin that corpus/fanin/v1/fanin.proto
// imports (the loader resolves a file's imports in parallel).
func imported(rel string) bool {
	return rel == "corpus/xstates/v1/xstates.proto" ||
		strings.HasPrefix(rel, "corpus/fanin/") && !strings.HasPrefix(rel, "corpus/fanin/v1/")
}

// minContracts is how many files TestCorpus names at least, so that a
// corpus that lost files by accident fails.
const minContracts = 80

// manyImports is the file of the corpus with many imports and how many it
// must keep.
const manyImports, minImports = "corpus/fanin/v1/fanin.proto", 64

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
		if !imported(filepath.ToSlash(rel)) {
			files = append(files, filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < minContracts {
		t.Fatalf("corpus has %d contracts, want at least %d", len(files), minContracts)
	}
	ctx := context.Background()
	set, err := corpus.Lint(ctx, root, files...)
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Diagnostics) > 0 {
		t.Fatalf("lint rejects the corpus:\n%v", set.Diagnostics)
	}
	if fd, err := set.Registry.FindFileByPath(manyImports); err != nil {
		t.Fatal(err)
	} else if n := fd.Imports().Len(); n < minImports {
		t.Fatalf("%s imports %d files, want at least %d", manyImports, n, minImports)
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
