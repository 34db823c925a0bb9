package golang_test

import (
	"bytes"
	"context"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/msgcontract/msgcontract/codegen/emit"
	"github.com/msgcontract/msgcontract/codegen/generate"
	"github.com/msgcontract/msgcontract/codegen/model"
)

// update rewrites the golden files: go test ./codegen/golang -update
var update = flag.Bool("update", false, "rewrite testdata/golden/go from the current generator")

// repoRoot is the repository root, relative to this package.
const repoRoot = "../.."

// goldenCase is one generation run whose output is kept under
// testdata/golden/go/<name>.
type goldenCase struct {
	name  string
	root  string // import path, relative to the repo root
	files []string
}

var goldenCases = []goldenCase{
	{
		name: "examples",
		root: "examples/proto",
		files: []string{
			"shop/payment/v1/payment.proto",
			"shop/inventory/v1/inventory.proto",
		},
	},
	{
		name: "edge",
		root: "testdata/codegen/proto",
		files: []string{
			"edge/keys/v1/keys.proto",
			"edge/keys/v1/states.proto",
			"edge/legacy/v1/legacy.proto",
			"edge/empty/v1/empty.proto",
		},
	},
	{
		// Apart from "edge": Debian's protoc 3.21 predates editions.
		name:  "editions",
		root:  "testdata/codegen/proto",
		files: []string{"edge/editions/v1/editions.proto"},
	},
}

// goldenParams are the parameters goldens are generated with; Version is
// fixed so that goldens do not change with the build.
var goldenParams = emit.Params{Lang: "go", Paths: "source_relative", Version: "(golden)"}

// load compiles a case's files.
func load(t *testing.T, root string, files ...string) *model.Set {
	t.Helper()
	dir := filepath.Join(repoRoot, root)
	paths := make([]string, len(files))
	for i, f := range files {
		paths[i] = filepath.Join(dir, filepath.FromSlash(f))
	}
	set, err := model.Load(context.Background(), model.Config{ImportPaths: []string{dir}}, paths...)
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Diagnostics) > 0 {
		t.Fatalf("lint errors:\n%v", set.Diagnostics)
	}
	return set
}

// TestGolden fails when testdata/golden/go differs from what the generator
// writes now: a file differs, is missing or is stale.
func TestGolden(t *testing.T) {
	t.Parallel()
	for _, tc := range goldenCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			files, err := generate.Run(load(t, tc.root, tc.files...), goldenParams)
			if err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(repoRoot, "testdata", "golden", "go", tc.name)
			if *update {
				if err := os.RemoveAll(dir); err != nil {
					t.Fatal(err)
				}
				for _, f := range files {
					p := filepath.Join(dir, filepath.FromSlash(f.Name))
					if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(p, f.Content, 0o644); err != nil {
						t.Fatal(err)
					}
				}
				return
			}
			want := readTree(t, dir)
			got := map[string][]byte{}
			for _, f := range files {
				got[f.Name] = f.Content
			}
			for _, name := range sortedKeys(got) {
				w, ok := want[name]
				switch {
				case !ok:
					t.Errorf("%s: generated but has no golden file; run go test ./codegen/golang -update", name)
				case !bytes.Equal(w, got[name]):
					t.Errorf("%s: stale golden file; run go test ./codegen/golang -update and review the diff", name)
				}
			}
			for _, name := range sortedKeys(want) {
				if _, ok := got[name]; !ok {
					t.Errorf("%s: golden file is no longer generated; run go test ./codegen/golang -update", name)
				}
			}
		})
	}
}

func readTree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = b
		return nil
	})
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return out
}

func sortedKeys(m map[string][]byte) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
