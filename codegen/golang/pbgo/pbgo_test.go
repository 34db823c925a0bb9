package pbgo_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/msgcontract/msgcontract/third_party/protocompile"

	"github.com/msgcontract/msgcontract/codegen/emit"
	"github.com/msgcontract/msgcontract/codegen/golang/pbgo"
)

// TestCommittedProtoGoIsFresh fails when the committed Go of msgcontract's
// own protos differs from what `make proto` would write now.
func TestCommittedProtoGoIsFresh(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..", "..")
	comp := protocompile.Compiler{
		Resolver: protocompile.WithStandardImports(&protocompile.SourceResolver{
			ImportPaths: []string{filepath.Join(root, "contracts")},
		}),
		SourceInfoMode: protocompile.SourceInfoStandard,
	}
	for file, target := range map[string]struct{ module, dir string }{
		"msgcontract/v1/options.proto":  {"github.com/msgcontract/msgcontract", "."},
		"msgcontract/v1/envelope.proto": {"github.com/msgcontract/msgcontract/runtime-go", "runtime-go"},
	} {
		files, err := comp.Compile(context.Background(), file)
		if err != nil {
			t.Fatal(err)
		}
		out, err := pbgo.Generate(emit.Params{Module: target.module}, files[0])
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range out {
			path := filepath.Join(root, target.dir, filepath.FromSlash(f.Name))
			committed, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run make proto)", err)
			}
			if string(committed) != string(f.Content) {
				t.Errorf("%s is stale: run make proto and commit the result", path)
			}
		}
	}
}
