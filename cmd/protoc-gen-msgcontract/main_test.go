package main_test

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/msgcontract/msgcontract/internal/cli"
)

const repoRoot = "../.."

// TestProtocMatchesGenerate runs the plugin under a real protoc and checks
// that it writes byte-for-byte what `msgcontract generate` writes. CI
// installs protoc with scripts/install-protoc.sh; without one the test
// skips and says so.
func TestProtocMatchesGenerate(t *testing.T) {
	protoc, err := exec.LookPath("protoc")
	if err != nil {
		t.Skip("protoc not found on PATH; install it with: bash scripts/install-protoc.sh")
	}
	bin := t.TempDir()
	build := exec.Command("go", "build", "-o", filepath.Join(bin, "protoc-gen-msgcontract"), ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	tests := []struct {
		name   string
		root   string
		files  []string
		params string   // protoc plugin parameter
		flags  []string // the same for msgcontract generate
	}{
		{name: "examples", root: "examples/proto",
			files:  []string{"shop/payment/v1/payment.proto", "shop/inventory/v1/inventory.proto"},
			params: "lang=go,module=github.com/msgcontract/msgcontract",
			flags:  []string{"--module", "github.com/msgcontract/msgcontract"}},
		{name: "edge", root: "testdata/codegen/proto",
			files:  []string{"edge/keys/v1/keys.proto", "edge/keys/v1/states.proto", "edge/legacy/v1/legacy.proto", "edge/empty/v1/empty.proto"},
			params: "paths=source_relative",
			flags:  []string{"--paths", "source_relative"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := filepath.Join(repoRoot, filepath.FromSlash(tc.root))
			var paths []string
			for _, f := range tc.files {
				paths = append(paths, filepath.Join(root, filepath.FromSlash(f)))
			}
			viaProtoc := t.TempDir()
			args := []string{
				"--plugin=protoc-gen-msgcontract=" + filepath.Join(bin, "protoc-gen-msgcontract"),
				"-I", root, "-I", filepath.Join(repoRoot, "contracts"),
				"--msgcontract_out=" + tc.params + ":" + viaProtoc,
			}
			cmd := exec.Command(protoc, append(args, paths...)...)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("protoc: %v\n%s", err, out)
			}
			viaCLI := t.TempDir()
			var stdout, stderr bytes.Buffer
			cliArgs := append([]string{"generate", "--lang", "go", "--out", viaCLI, "-I", root}, tc.flags...)
			if code := cli.Execute(context.Background(), append(cliArgs, paths...), &stdout, &stderr); code != 0 {
				t.Fatalf("msgcontract generate exited %d: %s", code, stderr.String())
			}
			want, got := tree(t, viaCLI), tree(t, viaProtoc)
			if len(want) == 0 {
				t.Fatal("msgcontract generate wrote nothing")
			}
			for name, w := range want {
				g, ok := got[name]
				switch {
				case !ok:
					t.Errorf("%s: written by msgcontract generate, not by protoc", name)
				case !bytes.Equal(g, w):
					t.Errorf("%s: protoc-gen-msgcontract's output differs from msgcontract generate's", name)
				}
			}
			for name := range got {
				if _, ok := want[name]; !ok {
					t.Errorf("%s: written by protoc, not by msgcontract generate", name)
				}
			}
		})
	}
}

func tree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
