package python_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/msgcontract/msgcontract/conformance/toolchain/python"
)

// TestPythonInterpreterAt: each end's variable names its interpreter, and
// without it each end finds its own virtualenv in a parent directory.
func TestPythonInterpreterAt(t *testing.T) {
	t.Setenv("MSGCONTRACT_PYTHON", "/newest/python")
	t.Setenv("MSGCONTRACT_PYTHON_OLDEST", "/oldest/python")
	for end, want := range map[python.End]string{python.Newest: "/newest/python", python.Oldest: "/oldest/python"} {
		if got, err := python.InterpreterAt(end); err != nil || got != want {
			t.Errorf("InterpreterAt(%v) = %q, %v; want %q", end, got, err, want)
		}
	}
	if got, _ := python.Interpreter(); got != "/newest/python" {
		t.Errorf("Interpreter() = %q, want the newest end's /newest/python", got)
	}
	if _, err := python.InterpreterAt(python.End(7)); err == nil {
		t.Error("InterpreterAt(End(7)) found an interpreter; want an error")
	}

	t.Setenv("MSGCONTRACT_PYTHON", "")
	t.Setenv("MSGCONTRACT_PYTHON_OLDEST", "")
	root := t.TempDir()
	for _, venv := range []string{".venv", ".venv-oldest"} {
		if err := os.MkdirAll(filepath.Join(root, venv, "bin"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, venv, "bin", "python"), nil, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	sub := filepath.Join(root, "a", "b")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(sub)
	for end, venv := range map[python.End]string{python.Newest: ".venv", python.Oldest: ".venv-oldest"} {
		want := filepath.Join(root, venv, "bin", "python")
		if got, err := python.InterpreterAt(end); err != nil || got != want {
			t.Errorf("InterpreterAt(%v) from %s = %q, %v; want %q", end, sub, got, err, want)
		}
	}
}

// TestPythonEndVersions: each end's virtualenv has PROTOBUF's protobuf,
// grpcio-tools and types-protobuf of that end.
func TestPythonEndVersions(t *testing.T) {
	pins, err := os.ReadFile(filepath.Join("..", "..", "..", "PROTOBUF"))
	if err != nil {
		t.Fatal(err)
	}
	pin := func(name string) string {
		m := regexp.MustCompile(`(?m)^` + name + `=(\S+)$`).FindSubmatch(pins)
		if m == nil {
			t.Fatalf("PROTOBUF sets no %s", name)
		}
		return string(m[1])
	}
	for _, end := range []python.End{python.Newest, python.Oldest} {
		py, err := python.InterpreterAt(end)
		if err != nil {
			t.Fatal(err)
		}
		suffix := strings.ToUpper(end.String())
		out, err := exec.CommandContext(context.Background(), py, "-c",
			"from importlib.metadata import version as v; print(v('protobuf'), v('grpcio-tools'), v('types-protobuf'))").CombinedOutput()
		if err != nil {
			t.Fatalf("%s end (%s): %v\n%s", end, py, err, out)
		}
		want := strings.Join([]string{pin("PYTHON_PROTOBUF_" + suffix), pin("PYTHON_GRPCIO_TOOLS_" + suffix),
			pin("PYTHON_TYPES_PROTOBUF_" + suffix)}, " ")
		if got := strings.TrimSpace(string(out)); got != want {
			t.Errorf("%s end (%s): protobuf, grpcio-tools, types-protobuf = %s; PROTOBUF says %s", end, py, got, want)
		}
	}
}
