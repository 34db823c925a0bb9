package python_test

import (
	"context"
	_ "embed"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/msgcontract/msgcontract/codegen/model"
	"github.com/msgcontract/msgcontract/conformance/toolchain/python"
	"github.com/msgcontract/msgcontract/internal/testsummary"
)

//go:embed testdata/test_payment_contract.py
var paymentTest string

// TestPytest generates the example contracts' Python, checks it with
// py_compile and mypy --strict (the test file too), and runs pytest on the
// contract module and the consumer skeleton against sqlite3, on each end of
// the supported protobuf range (each with its own protoc, stubs and runtime).
func TestPytest(t *testing.T) {
	var lines []string
	for _, end := range []python.End{python.Newest, python.Oldest} {
		t.Run(end.String(), func(t *testing.T) {
			ran := pytestAt(t, end)
			lines = append(lines, fmt.Sprintf("%d passed (%s protobuf end)", ran, end))
		})
	}
	if !t.Failed() {
		testsummary.Report(t, "python", strings.Join(lines, ", "))
	}
}

func pytestAt(t *testing.T, end python.End) int {
	ctx := context.Background()
	root := filepath.Join("..", "..", "..", "examples", "proto")
	set, err := model.Load(ctx, model.Config{ImportPaths: []string{root}},
		filepath.Join(root, "shop", "payment", "v1", "payment.proto"),
		filepath.Join(root, "shop", "inventory", "v1", "inventory.proto"))
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	b, err := python.CompileAt(ctx, end, set, []string{root}, work, filepath.Join(work, ".mypy_cache"),
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
	// pytest's closing line counts what ran; a test it did not collect
	// would otherwise pass unnoticed.
	m := pytestTotal.FindSubmatch(out)
	if m == nil {
		t.Fatalf("pytest: no closing line \"N passed in Xs\" (with nothing skipped or failed):\n%s", out)
	}
	ran, _ := strconv.Atoi(string(m[1]))
	if want := len(pytestDef.FindAllStringIndex(paymentTest, -1)); ran != want {
		t.Fatalf("pytest passed %d tests, want the %d of test_payment_contract.py:\n%s", ran, want, out)
	}
	return ran
}

var (
	// pytestTotal is pytest -q's closing line when every test passed.
	pytestTotal = regexp.MustCompile(`(?m)^(\d+) passed(?:, \d+ warnings?)? in [0-9.]+s$`)
	// pytestDef is a test function at the top level of the test file.
	pytestDef = regexp.MustCompile(`(?m)^def test_`)
)
