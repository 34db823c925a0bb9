package edition2024_test

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/msgcontract/msgcontract/codegen/emit/emittest"
	"github.com/msgcontract/msgcontract/codegen/model"
	"github.com/msgcontract/msgcontract/conformance/toolchain/java"
	"github.com/msgcontract/msgcontract/conformance/toolchain/protocin"
	"github.com/msgcontract/msgcontract/internal/cli"
)

// TestPluginMatchesGenerate: protoc 36.2 driving protoc-gen-msgcontract on
// the corpus's edition-2024 contracts (option imports, export and local,
// language features) writes the same Go, Java and Python, byte for byte,
// as msgcontract generate.
func TestPluginMatchesGenerate(t *testing.T) {
	ctx := context.Background()
	protoc, err := java.ProtocFor(ctx, protocVersion)
	if err != nil {
		t.Fatalf("protoc %s from Maven Central is needed for this test: %v", protocVersion, err)
	}
	t.Cleanup(func() { protoc.Close() })
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(repo, "testdata", "corpus", "proto")
	files, err := filepath.Glob(filepath.Join(root, "corpus", "ed24*", "v1", "*.proto"))
	if err != nil || len(files) < 10 {
		t.Fatalf("edition-2024 corpus files: %d, %v", len(files), err)
	}
	bin := t.TempDir()
	build := exec.Command("go", "build", "-o", filepath.Join(bin, "protoc-gen-msgcontract"), "./cmd/protoc-gen-msgcontract")
	build.Dir = repo
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	set, err := model.Load(ctx, model.Config{ImportPaths: []string{root}}, files...)
	if err != nil {
		t.Fatal(err)
	}
	features, err := protocin.Args(set, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	// Some of the files have no go_package: both are given the same M.
	var params []string
	cliArgs := []string{"generate", "--quiet", "--lang", "go+java+python", "-I", root}
	for _, f := range files {
		rel, _ := filepath.Rel(root, f)
		m := "M" + filepath.ToSlash(rel) + "=example.com/" + filepath.ToSlash(filepath.Dir(rel))
		params = append(params, m)
		cliArgs = append(cliArgs, "--go-opt", m)
	}
	viaProtoc := t.TempDir()
	args := append([]string{
		"--plugin=protoc-gen-msgcontract=" + filepath.Join(bin, "protoc-gen-msgcontract"),
		"-I", root, "-I", filepath.Join(repo, "contracts"), "-I", protoc.Include,
		"--msgcontract_out=lang=go+java+python," + strings.Join(params, ",") + ":" + viaProtoc,
	}, features...)
	if out, err := exec.CommandContext(ctx, protoc.Path, append(args, files...)...).CombinedOutput(); err != nil {
		t.Fatalf("protoc: %v\n%s", err, out)
	}
	viaCLI := t.TempDir()
	var stdout, stderr bytes.Buffer
	cliArgs = append(append(cliArgs, "--out", viaCLI), files...)
	if code := cli.Execute(ctx, cliArgs, &stdout, &stderr); code != 0 {
		t.Fatalf("msgcontract generate exited %d: %s", code, stderr.String())
	}
	want, got := emittest.ReadTree(t, viaCLI), emittest.ReadTree(t, viaProtoc)
	if len(want) < len(files) {
		t.Fatalf("msgcontract generate wrote %d files for %d contracts", len(want), len(files))
	}
	emittest.SameTrees(t, want, got, "msgcontract generate", "protoc-gen-msgcontract")
	langs := map[string]int{}
	for name := range want {
		langs[filepath.Ext(name)]++
	}
	for _, ext := range []string{".go", ".java", ".py"} {
		if langs[ext] == 0 {
			t.Errorf("no %s file generated", ext)
		}
	}
	t.Logf("%d contracts, %d files equal (%v)", len(files), len(want), langs)
}
