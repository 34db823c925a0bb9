package corpus

import (
	"bytes"
	"context"
	"fmt"
	"go/format"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/msgcontract/msgcontract/codegen/generate"
	"github.com/msgcontract/msgcontract/codegen/model"
	"github.com/msgcontract/msgcontract/conformance"
	"github.com/msgcontract/msgcontract/conformance/golang"
	"github.com/msgcontract/msgcontract/conformance/java"
	"github.com/msgcontract/msgcontract/conformance/python"
	javabuild "github.com/msgcontract/msgcontract/conformance/toolchain/java"
)

// Lint loads files (import paths relative to root) as msgcontract lint
// does, emitter checks included.
func Lint(ctx context.Context, root string, files ...string) (*model.Set, error) {
	paths := make([]string, len(files))
	for i, f := range files {
		paths[i] = root + string(os.PathSeparator) + f
	}
	set, err := model.Load(ctx, model.Config{ImportPaths: []string{root}}, paths...)
	if err != nil {
		return nil, err
	}
	generate.Lint(set)
	return set, nil
}

// Check builds the set's files in Go (then go vet, and gofmt stability of
// every Go file), Java (javac
// -Xlint:all -Werror) and Python (mypy --strict), once per language for
// the whole set, and runs cases in each. It returns the runner's report
// and an error naming every language that did not pass every case.
// javaTools is the Java toolchain, resolved once by the caller's Shared.
func Check(ctx context.Context, javaTools *javabuild.Shared, root string, files []string, cases []conformance.Case, work string) (string, error) {
	vf := &conformance.VectorFile{ProtoRoot: root, Files: files, Cases: cases, Path: "corpus.json", ProtoDir: root}
	exs := []conformance.Executor{
		{Lang: "go", Run: vetted},
		{Lang: "java", Run: java.Executor{Tools: javaTools}.Run},
		{Lang: "python", Run: python.Run},
	}
	var out bytes.Buffer
	var failed []string
	for _, s := range conformance.Run(ctx, &out, []*conformance.VectorFile{vf}, exs, work) {
		if s.Failed > 0 || s.Passed != len(cases) {
			failed = append(failed, s.Line())
		}
	}
	if len(failed) > 0 {
		return out.String(), fmt.Errorf("%s", strings.Join(failed, "; "))
	}
	return out.String(), nil
}

// vetted is the Go executor followed by go vet over the generated module
// and GofmtStable over its files.
func vetted(ctx context.Context, vf *conformance.VectorFile, dir string) ([]conformance.Result, error) {
	res, err := golang.Run(ctx, vf, dir)
	if err != nil {
		return nil, err
	}
	if err := GofmtStable(dir); err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, "go", "vet", "./...")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("go vet: %v\n%s", err, out)
	}
	return res, nil
}

// GofmtStable checks that every .go file under dir but protoc-gen-go's is
// as gofmt prints it (go/format.Source gives back the same bytes):
// generated code a user's gofmt or editor would rewrite is a defect even
// when it compiles. The .pb.go files are protoc-gen-go's output byte for
// byte (codegen/golang/pbgo), which gofmt does not always leave alone
// when comments hold odd text (random contracts show it: alignment of
// struct fields, tab-led comment lines). The error names each file that
// is not stable, with its first differing line.
func GofmtStable(dir string) error {
	var bad []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, ".pb.go") {
			return err
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if msg := GofmtDiff(src); msg != "" {
			bad = append(bad, filepath.ToSlash(rel)+": "+msg)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if len(bad) > 0 {
		return fmt.Errorf("not gofmt-stable:\n%s", strings.Join(bad, "\n"))
	}
	return nil
}

// GofmtDiff is "" when gofmt leaves src as it is, else what it changes
// first: the line number and the line before and after.
func GofmtDiff(src []byte) string {
	out, err := format.Source(src)
	if err != nil {
		return "gofmt: " + err.Error()
	}
	if bytes.Equal(out, src) {
		return ""
	}
	a, b := strings.Split(string(src), "\n"), strings.Split(string(out), "\n")
	for i := 0; i < len(a) || i < len(b); i++ {
		var la, lb string
		if i < len(a) {
			la = a[i]
		}
		if i < len(b) {
			lb = b[i]
		}
		if la != lb {
			return fmt.Sprintf("line %d: %q, gofmt: %q", i+1, la, lb)
		}
	}
	return "differs"
}
