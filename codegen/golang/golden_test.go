package golang_test

import (
	"context"
	"flag"
	"path/filepath"
	"testing"

	"github.com/msgcontract/msgcontract/codegen/emit"
	"github.com/msgcontract/msgcontract/codegen/emit/emittest"
	"github.com/msgcontract/msgcontract/codegen/generate"
	"github.com/msgcontract/msgcontract/codegen/model"
	"github.com/msgcontract/msgcontract/internal/examplegen"
)

// update rewrites the golden files: go test ./codegen/golang -update
var update = flag.Bool("update", false, "rewrite testdata/golden/go and examples/gen/go from the current generator")

// repoRoot is the repository root, relative to this package.
const repoRoot = "../.."

// goldenCase is one generation run whose output is kept under
// testdata/golden/go/<name>, or under dir with params when dir is set.
type goldenCase struct {
	name  string
	root  string // import path, relative to the repo root
	files []string
	// dir (relative to the repo root) and params, when dir is set: the
	// output is committed code kept there, generated with these params.
	dir    string
	params emit.Params
}

var goldenCases = []goldenCase{
	{
		// The examples' golden tree is their committed code, which
		// `make examples-gen` writes too: one copy, so it cannot be
		// stale while this test passes.
		name:   "examples",
		root:   examplegen.ProtoDir,
		files:  examplegen.Protos,
		dir:    examplegen.OutDir,
		params: examplegen.Params,
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

// TestGolden fails when testdata/golden/go or examples/gen/go differs from
// what the generator writes now: a file differs, is missing or is stale.
func TestGolden(t *testing.T) {
	t.Parallel()
	for _, tc := range goldenCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			params, dir := goldenParams, filepath.Join(repoRoot, "testdata", "golden", "go", tc.name)
			if tc.dir != "" {
				params, dir = tc.params, filepath.Join(repoRoot, filepath.FromSlash(tc.dir))
			}
			files, err := generate.Run(load(t, tc.root, tc.files...), params)
			if err != nil {
				t.Fatal(err)
			}
			emittest.Golden(t, dir, files, *update, "go test ./codegen/golang -update")
		})
	}
}
