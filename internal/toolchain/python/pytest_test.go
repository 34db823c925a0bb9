package python_test

import (
	"context"
	_ "embed"
	"path/filepath"
	"testing"

	"github.com/msgcontract/msgcontract/codegen/model"
	"github.com/msgcontract/msgcontract/internal/toolchain/python"
)

//go:embed testdata/test_payment_contract.py
var paymentTest string

// TestPytest generates the example contracts' Python, checks it with
// py_compile and mypy --strict (the test file too), and runs pytest on the
// contract module and the consumer skeleton against sqlite3.
func TestPytest(t *testing.T) {
	ctx := context.Background()
	root := filepath.Join("..", "..", "..", "examples", "proto")
	set, err := model.Load(ctx, model.Config{ImportPaths: []string{root}},
		filepath.Join(root, "shop", "payment", "v1", "payment.proto"),
		filepath.Join(root, "shop", "inventory", "v1", "inventory.proto"))
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	b, err := python.Compile(ctx, set, []string{root}, work, filepath.Join(work, ".mypy_cache"),
		map[string]string{"test_payment_contract.py": paymentTest})
	if err != nil {
		t.Fatal(err)
	}
	cmd := b.Command(ctx, "-m", "pytest", "-q", "-p", "no:cacheprovider", filepath.Join(b.Root, "test_payment_contract.py"))
	cmd.Dir = b.Root
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("pytest: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}
