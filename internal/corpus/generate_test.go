package corpus_test

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/msgcontract/msgcontract/codegen/emit"
	"github.com/msgcontract/msgcontract/codegen/generate"
	"github.com/msgcontract/msgcontract/internal/corpus"
)

// TestRandomContractsGenerate is the fast half of the property: over many
// seeds, every random contract (random comments, names, deprecations and
// options) is either rejected by lint with positioned findings or
// generated without error in every language, into sources each
// language's parser accepts and, for Go, that gofmt leaves as they are
// (the slow half, TestRandomContracts, also builds and runs one seed's
// output).
func TestRandomContractsGenerate(t *testing.T) {
	t.Parallel()
	javaS, pyS, err := servers()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for seed := uint64(1); seed <= 40; seed++ {
		root := t.TempDir()
		srcs := corpus.Random(seed, 4)
		for _, path := range writeSources(t, root, srcs) {
			src := srcs[path]
			set, err := corpus.Lint(ctx, root, path)
			if err != nil {
				t.Fatalf("seed %d %s does not compile: %v\n%s", seed, path, err, src)
			}
			if len(set.Diagnostics) > 0 {
				for _, d := range set.Diagnostics {
					if d.Pos.Line <= 0 {
						t.Errorf("seed %d: finding without a position: %v", seed, d)
					}
				}
				continue
			}
			for _, lang := range generate.Langs {
				files, err := generate.Run(set, emit.Params{Lang: lang})
				if err != nil {
					t.Errorf("seed %d %s: lint accepts it, but %s generation fails: %v\n%s", seed, path, lang, err, src)
					continue
				}
				if msg := parses(t, javaS, pyS, lang, files); msg != "" {
					t.Errorf("seed %d %s: %s\n--- contract\n%s", seed, path, msg, src)
				}
			}
		}
	}
}

// writeSources writes srcs (import path → source) under root and returns
// the paths sorted.
func writeSources(t *testing.T, root string, srcs map[string]string) []string {
	t.Helper()
	var paths []string
	for path, src := range srcs {
		p := filepath.Join(root, filepath.FromSlash(path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, path)
	}
	sort.Strings(paths)
	return paths
}
