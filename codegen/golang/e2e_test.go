package golang_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/msgcontract/msgcontract/codegen/model"
	gorun "github.com/msgcontract/msgcontract/conformance/toolchain/golang"
)

// TestEndToEnd compiles the generated code for the examples and the edge
// contracts beside protoc-gen-go's output in a throwaway module against
// runtime-go, vets it, and runs testdata/e2e/main.go, which checks biz
// keys, classification, backoff, transitions and the producer functions
// against DESIGN.md.
func TestEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a Go module; skipped with -short")
	}
	t.Parallel()
	var paths []string
	var imports []string
	for _, tc := range goldenCases {
		dir := filepath.Join(repoRoot, tc.root)
		if !slices.Contains(imports, dir) {
			imports = append(imports, dir)
		}
		for _, f := range tc.files {
			paths = append(paths, filepath.Join(dir, filepath.FromSlash(f)))
		}
	}
	set, err := model.Load(context.Background(), model.Config{ImportPaths: imports}, paths...)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	mod, err := gorun.WriteModule(set, filepath.Join(repoRoot, "runtime-go"), dir)
	if err != nil {
		t.Fatal(err)
	}
	prog, err := os.ReadFile(filepath.Join("testdata", "e2e", "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "cmd", "e2e"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "cmd", "e2e", "main.go"), prog, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := mod.Run(context.Background(), "./cmd/e2e", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "all checks passed") {
		t.Fatalf("e2e program:\n%s", out)
	}
	if out, err := mod.Go(context.Background(), "vet", "./..."); err != nil {
		t.Fatalf("go vet on generated code: %v\n%s", err, out)
	}
}
