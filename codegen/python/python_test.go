package python_test

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/msgcontract/msgcontract/codegen/emit"
	"github.com/msgcontract/msgcontract/codegen/generate"
	"github.com/msgcontract/msgcontract/codegen/model"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden/python")

// exampleFiles are the example contracts whose generated Java is kept as
// golden files.
var exampleFiles = []string{"../../examples/proto/shop/payment/v1/payment.proto", "../../examples/proto/shop/inventory/v1/inventory.proto"}

func generateExamples(t *testing.T) []emit.File {
	t.Helper()
	set, err := model.Load(context.Background(), model.Config{ImportPaths: []string{"../../examples/proto"}}, exampleFiles...)
	if err != nil {
		t.Fatal(err)
	}
	files, err := generate.Run(set, emit.Params{Lang: "python", Version: "v0.0.0-golden"})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestGolden fails when testdata/golden/python is stale; refresh it with
// go test ./codegen/python -update.
func TestGolden(t *testing.T) {
	files := generateExamples(t)
	root := filepath.Join("..", "..", "testdata", "golden", "python")
	if *update {
		if err := os.RemoveAll(root); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]bool{}
	for _, f := range files {
		p := filepath.Join(root, filepath.FromSlash(f.Name))
		want[p] = true
		if *update {
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, f.Content, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(p)
		if err != nil {
			t.Errorf("stale generated files: %v; run go test ./codegen/python -update", err)
			continue
		}
		if !bytes.Equal(got, f.Content) {
			t.Errorf("stale generated file %s; run go test ./codegen/python -update", p)
		}
	}
	_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && !want[p] {
			t.Errorf("stale generated file %s is no longer generated; run go test ./codegen/python -update", p)
		}
		return nil
	})
}
