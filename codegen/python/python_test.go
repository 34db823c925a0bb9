package python_test

import (
	"context"
	"flag"
	"path/filepath"
	"testing"

	"github.com/msgcontract/msgcontract/codegen/emit"
	"github.com/msgcontract/msgcontract/codegen/emit/emittest"
	"github.com/msgcontract/msgcontract/codegen/generate"
	"github.com/msgcontract/msgcontract/codegen/model"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden/python")

// exampleFiles are the example contracts whose generated Python is kept as
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
	emittest.Golden(t, root, files, *update, "go test ./codegen/python -update")
}
