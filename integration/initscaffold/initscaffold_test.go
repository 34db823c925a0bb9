package initscaffold

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// The line each scaffold's program prints when the event was handled once
// and its duplicate skipped.
var verdict = regexp.MustCompile(`(?m)^svc_[a-z]+: published OrderPaid order-1,? .*consumed: handled 1, duplicates skipped 1; payments recorded: 1`)

type env struct {
	root string // this checkout
	bin  string // msgcontract and protoc-gen-msgcontract, built from it
}

func setup(t *testing.T) env {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range []string{"go", "make"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is not on PATH", tool)
		}
	}
	bin := t.TempDir()
	for _, cmd := range []string{"msgcontract", "protoc-gen-msgcontract"} {
		// A plain build is "dev": init then takes the runtimes' version from VERSION,
		// which is the version of the runtimes in this checkout.
		run(t, root, nil, "go", "build", "-o", filepath.Join(bin, cmd), "./cmd/"+cmd)
	}
	return env{root: root, bin: bin}
}

// scaffold runs msgcontract init and returns the scaffold and a copy of it
// to build in; the scaffold itself stays as init wrote it.
func (e env) scaffold(t *testing.T, lang string) (orig, work string) {
	t.Helper()
	base := t.TempDir()
	orig = filepath.Join(base, "svc_"+lang)
	run(t, base, nil, filepath.Join(e.bin, "msgcontract"), "init", "--lang", lang, orig)
	work = filepath.Join(base, "work")
	copyDir(t, orig, work)
	return orig, work
}

// path puts the checkout's binaries first on PATH.
func (e env) path(extra ...string) []string {
	dirs := append(extra, e.bin, os.Getenv("PATH"))
	return []string{"PATH=" + strings.Join(dirs, string(os.PathListSeparator))}
}

// noCheckoutPath fails when a file of the scaffold names the checkout.
func (e env) noCheckoutPath(t *testing.T, dir string) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if bytes.Contains(b, []byte(e.root)) {
			t.Errorf("%s names the checkout %s", p, e.root)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestGoScaffold(t *testing.T) {
	e := setup(t)
	orig, work := e.scaffold(t, "go")
	// The copy, not the scaffold, requires runtime-go from this checkout.
	goEnv := append(e.path(), "GOWORK=off", "GOFLAGS=")
	run(t, work, goEnv, "go", "mod", "edit", "-replace",
		"github.com/msgcontract/msgcontract/runtime-go="+filepath.Join(e.root, "runtime-go"))
	out := run(t, work, goEnv, "make", "run")
	if !verdict.MatchString(out) {
		t.Fatalf("make run did not print the verdict:\n%s", out)
	}

	// The Makefile's protoc line (-I "$(msgcontract include)") writes what
	// builds too, with protoc-gen-go of the tool module's protobuf.
	if _, err := exec.LookPath("protoc"); err != nil {
		t.Fatal("protoc is not on PATH: scripts/install-protoc.sh installs it")
	}
	run(t, e.root, nil, "go", "build", "-o", filepath.Join(e.bin, "protoc-gen-go"), "google.golang.org/protobuf/cmd/protoc-gen-go")
	if err := os.RemoveAll(filepath.Join(work, "gen")); err != nil {
		t.Fatal(err)
	}
	run(t, work, append(goEnv, "XDG_CACHE_HOME="+t.TempDir()), "make", "protoc")
	for _, f := range []string{"gen/svc_go/v1/svc_go.pb.go", "gen/svc_go/v1/svc_go.msgcontract.go"} {
		if _, err := os.Stat(filepath.Join(work, f)); err != nil {
			t.Errorf("make protoc did not write %s: %v", f, err)
		}
	}
	if out := run(t, work, goEnv, "go", "run", "."); !verdict.MatchString(out) {
		t.Fatalf("go run after make protoc did not print the verdict:\n%s", out)
	}
	e.noCheckoutPath(t, orig)
}

func TestPythonScaffold(t *testing.T) {
	e := setup(t)
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Fatal("python3 is not on PATH")
	}
	orig, work := e.scaffold(t, "python")
	venv := filepath.Join(t.TempDir(), "venv")
	run(t, work, nil, python, "-m", "venv", venv)
	vbin := filepath.Join(venv, "bin")
	pyEnv := append(e.path(vbin), "VIRTUAL_ENV="+venv, "PIP_DISABLE_PIP_VERSION_CHECK=1")
	// The README's install step, with msgcontract-runtime from this checkout
	// (its release pins msgcontract-runtime==VERSION, which this is).
	run(t, work, pyEnv, filepath.Join(vbin, "pip"), "install", "--quiet",
		filepath.Join(e.root, "runtime-python"), "-e", ".[dev]")
	out := run(t, work, pyEnv, "make", "run")
	if !strings.Contains(out, "Success: no issues found") {
		t.Errorf("make run did not type-check with mypy --strict:\n%s", out)
	}
	if !verdict.MatchString(out) {
		t.Fatalf("make run did not print the verdict:\n%s", out)
	}
	e.noCheckoutPath(t, orig)
}

func TestJavaScaffold(t *testing.T) {
	e := setup(t)
	if _, err := exec.LookPath("mvn"); err != nil {
		t.Fatal("mvn is not on PATH: scripts/setup-java.sh installs it")
	}
	version := strings.TrimSpace(string(must(os.ReadFile(filepath.Join(e.root, "VERSION")))))
	home, _ := os.UserHomeDir()
	jar := filepath.Join(home, ".m2/repository/io/msgcontract/msgcontract-runtime", version)
	if _, err := os.Stat(jar); err != nil {
		t.Fatalf("io.msgcontract:msgcontract-runtime:%s is not in ~/.m2: make runtime-java (scripts/install-runtime-java.sh) installs it", version)
	}
	orig, work := e.scaffold(t, "java")
	out := run(t, work, e.path(), "mvn", "-B", "-q", "compile", "exec:java")
	if !verdict.MatchString(out) {
		t.Fatalf("mvn compile exec:java did not print the verdict:\n%s", out)
	}
	// The Makefile's protoc line finds the options with msgcontract include.
	if _, err := exec.LookPath("protoc"); err != nil {
		t.Fatal("protoc is not on PATH: scripts/install-protoc.sh installs it")
	}
	cache := t.TempDir()
	run(t, work, append(e.path(), "XDG_CACHE_HOME="+cache), "make", "protoc")
	for _, f := range []string{"gen/java/com/example/svc_java/v1/OrderPaid.java", "gen/java/com/example/svc_java/v1/SvcJavaContract.java"} {
		if _, err := os.Stat(filepath.Join(work, f)); err != nil {
			t.Errorf("make protoc did not write %s: %v", f, err)
		}
	}
	if _, err := os.Stat(filepath.Join(work, "gen/java/io/msgcontract")); err == nil {
		t.Errorf("make protoc generated msgcontract's own option classes; they come from the runtime jar")
	}

	// buf: buf.yaml's workspace resolves the options through make include's
	// link, lints clean, and buf generate writes the contract's classes alone.
	buf := filepath.Join(e.root, ".tools", "bin", "buf")
	if _, err := os.Stat(buf); err != nil {
		t.Fatalf("%s is missing: scripts/install-buf.sh (run by scripts/setup.sh) installs it", buf)
	}
	if err := os.RemoveAll(filepath.Join(work, "gen")); err != nil {
		t.Fatal(err)
	}
	bufEnv := append(e.path(filepath.Dir(buf)), "XDG_CACHE_HOME="+cache, "BUF_CACHE_DIR="+t.TempDir())
	run(t, work, bufEnv, "make", "include")
	run(t, work, bufEnv, buf, "lint")
	run(t, work, bufEnv, buf, "generate")
	var generated []string
	err := filepath.WalkDir(filepath.Join(work, "gen"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(work, p)
			generated = append(generated, filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range generated {
		if !strings.HasPrefix(g, "gen/java/com/example/svc_java/v1/") {
			t.Errorf("buf generate wrote %s: only the service's contract should be generated, not msgcontract's options", g)
		}
	}
	if !slices.Contains(generated, "gen/java/com/example/svc_java/v1/SvcJavaContract.java") {
		t.Errorf("buf generate did not run protoc-gen-msgcontract; it wrote %v", generated)
	}
	e.noCheckoutPath(t, orig)
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func run(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s (in %s): %v\n%s", name, strings.Join(args, " "), dir, err, out)
	}
	return string(out)
}

func copyDir(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		dst := filepath.Join(to, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}
