// Package python builds generated Python: it generates protoc's _pb2
// modules (with .pyi stubs) and msgcontract's contract modules for a
// contract set with the pinned toolchain of one end of the supported
// protobuf range (.venv, the newest, or .venv-oldest; see End), and checks
// them with py_compile and mypy --strict. The Python conformance executor
// and the demo's Python service build on it.
package python

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/msgcontract/msgcontract/codegen/emit"
	"github.com/msgcontract/msgcontract/codegen/generate"
	"github.com/msgcontract/msgcontract/codegen/model"
	"github.com/msgcontract/msgcontract/codegen/python"
	"github.com/msgcontract/msgcontract/conformance/toolchain/protocin"
	"github.com/msgcontract/msgcontract/contracts"
)

// End is an end of the supported protobuf range (PROTOBUF at the
// repository root), each with its own virtualenv from
// scripts/setup-python.sh: its protobuf runtime, the grpcio-tools whose
// protoc generates the _pb2 modules for it, types-protobuf, mypy and pytest,
// and msgcontract-runtime (scripts/install-runtime-python.sh). The zero
// value is the newest end.
type End int

const (
	// Newest is .venv (requirements-dev.txt), or $MSGCONTRACT_PYTHON.
	Newest End = iota
	// Oldest is .venv-oldest (PROTOBUF's PYTHON_*_OLDEST), or
	// $MSGCONTRACT_PYTHON_OLDEST.
	Oldest
)

func (e End) String() string {
	switch e {
	case Newest:
		return "newest"
	case Oldest:
		return "oldest"
	}
	return fmt.Sprintf("End(%d)", int(e))
}

// MaxEdition is the newest edition the end's protobuf compiles and loads:
// protoc 29 and the Python protobuf 5.29 runtime stop at edition 2023.
func (e End) MaxEdition() descriptorpb.Edition {
	if e == Oldest {
		return descriptorpb.Edition_EDITION_2023
	}
	return descriptorpb.Edition_EDITION_2024
}

// Toolchain names the end's protobuf, as the conformance runner reports it.
func (e End) Toolchain() string {
	if e == Oldest {
		return "Python protobuf 5.29 (grpcio-tools' protoc 29.0)"
	}
	return "Python protobuf 7 (grpcio-tools' protoc 35.1)"
}

// venv and env are the end's virtualenv directory and the variable that
// overrides its interpreter.
func (e End) venv() (dir, env string, err error) {
	switch e {
	case Newest:
		return ".venv", "MSGCONTRACT_PYTHON", nil
	case Oldest:
		return ".venv-oldest", "MSGCONTRACT_PYTHON_OLDEST", nil
	}
	return "", "", fmt.Errorf("python toolchain: unknown end %v", e)
}

// Interpreter finds the Python with the pinned toolchain of the newest end:
// InterpreterAt(Newest).
func Interpreter() (string, error) {
	return InterpreterAt(Newest)
}

// InterpreterAt finds the Python of end: $MSGCONTRACT_PYTHON (Newest) or
// $MSGCONTRACT_PYTHON_OLDEST (Oldest), else .venv/bin/python or
// .venv-oldest/bin/python in the current directory or a parent (the
// virtualenvs scripts/setup-python.sh creates).
func InterpreterAt(end End) (string, error) {
	venv, env, err := end.venv()
	if err != nil {
		return "", err
	}
	if p := os.Getenv(env); p != "" {
		return p, nil
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		p := filepath.Join(dir, venv, "bin", "python")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no Python toolchain for the %s protobuf end: run scripts/setup-python.sh to create %s, or set %s to a python with it installed", end, venv, env)
		}
		dir = parent
	}
}

// Build is a generated and checked Python output.
type Build struct {
	Python string
	// Root is the directory to put on PYTHONPATH.
	Root string
	// Files are the msgcontract-generated files.
	Files []emit.File
	// Modules are the generated contract modules' import names.
	Modules []string
}

// Compile is CompileAt the newest end.
func Compile(ctx context.Context, set *model.Set, importPaths []string, workDir, mypyCache string, extra map[string]string) (*Build, error) {
	return CompileAt(ctx, Newest, set, importPaths, workDir, mypyCache, extra)
}

// CompileAt generates Python for set into workDir with end's toolchain
// (InterpreterAt), runs end's protoc for every proto file set compiled
// (except msgcontract's own, which the installed msgcontract-runtime holds)
// with importPaths, and checks the msgcontract output and the extra files
// (name → content) with py_compile and mypy --strict. mypyCache is shared
// between builds of one end to keep mypy fast (the ends' stubs differ: give
// each end its own).
func CompileAt(ctx context.Context, end End, set *model.Set, importPaths []string, workDir, mypyCache string, extra map[string]string) (*Build, error) {
	py, err := InterpreterAt(end)
	if err != nil {
		return nil, err
	}
	files, err := generate.Run(set, emit.Params{Lang: "python", Version: "conformance"})
	if err != nil {
		return nil, err
	}
	root := filepath.Join(workDir, "py")
	// msgcontract's own protos are compiled into msgcontract-runtime, which
	// also ships them for protoc's -I.
	protos := map[string]bool{}
	set.Registry.RangeFiles(func(fd protoreflect.FileDescriptor) bool {
		if !strings.HasPrefix(fd.Path(), "google/protobuf/") && !strings.HasPrefix(fd.Path(), contracts.Prefix) {
			protos[fd.Path()] = true
		}
		return true
	})
	var protoList []string
	for p := range protos {
		protoList = append(protoList, p)
	}
	sort.Strings(protoList)
	wkt, err := output(ctx, py, "-c", "import grpc_tools, os; print(os.path.join(os.path.dirname(grpc_tools.__file__), '_proto'))")
	if err != nil {
		return nil, fmt.Errorf("python toolchain: %w; run scripts/setup-python.sh", err)
	}
	inc, err := output(ctx, py, "-m", "msgcontract_runtime.include")
	if err != nil {
		return nil, fmt.Errorf("python toolchain: %w; run make runtime-python to install msgcontract-runtime", err)
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, err
	}
	args := []string{"-m", "grpc_tools.protoc"}
	for _, ip := range importPaths {
		args = append(args, "-I"+ip)
	}
	args = append(args, "-I"+strings.TrimSpace(inc), "-I"+strings.TrimSpace(wkt), "--python_out="+root, "--pyi_out="+root)
	features, err := protocin.Args(set, workDir)
	if err != nil {
		return nil, err
	}
	args = append(args, features...)
	if _, err := output(ctx, py, append(args, protoList...)...); err != nil {
		return nil, err
	}
	b := &Build{Python: py, Root: root, Files: files}
	var check []string
	for _, f := range files {
		if err := writeFile(filepath.Join(root, filepath.FromSlash(f.Name)), f.Content); err != nil {
			return nil, err
		}
		check = append(check, filepath.Join(root, filepath.FromSlash(f.Name)))
		b.Modules = append(b.Modules, strings.ReplaceAll(strings.TrimSuffix(f.Name, ".py"), "/", "."))
	}
	for name, content := range extra {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := writeFile(p, []byte(content)); err != nil {
			return nil, err
		}
		check = append(check, p)
	}
	sort.Strings(check)
	if _, err := output(ctx, py, append([]string{"-m", "py_compile"}, check...)...); err != nil {
		return nil, err
	}
	// protoc's .pyi stubs are not strict-clean: mypy checks msgcontract's
	// files strictly against them without reporting their own errors.
	cfg := "[mypy]\nstrict = True\nexplicit_package_bases = True\n"
	for _, p := range protoList {
		cfg += "\n[mypy-" + python.ModulePath(p) + "_pb2]\nignore_errors = True\n"
	}
	cfgPath := filepath.Join(workDir, "mypy.ini")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		return nil, err
	}
	mypy := []string{"-m", "mypy", "--config-file", cfgPath, "--no-error-summary", "--cache-dir", mypyCache}
	cmd := exec.CommandContext(ctx, py, append(mypy, check...)...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "MYPYPATH="+root)
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("mypy --strict: %v\n%s", err, out)
	}
	return b, nil
}

// Command returns a command running the interpreter with the build on
// PYTHONPATH.
func (b *Build) Command(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, b.Python, args...)
	cmd.Env = append(os.Environ(), "PYTHONPATH="+b.Root, "PYTHONDONTWRITEBYTECODE=1")
	return cmd
}

func output(ctx context.Context, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s %s: %v\n%s%s", filepath.Base(name), strings.Join(args[:min(2, len(args))], " "), err, out, stderr.String())
	}
	return string(out), nil
}

func writeFile(p string, content []byte) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, content, 0o644)
}
