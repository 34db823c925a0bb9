package main_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/msgcontract/msgcontract/codegen/emit/emittest"
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
			emittest.SameTrees(t, want, got, "msgcontract generate", "protoc-gen-msgcontract")
		})
	}
}

// tree reads a generated tree; a missing dir is an empty tree.
func tree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	return emittest.ReadTree(t, dir)
}

// TestGenerateCommand pins msgcontract generate's exit codes and output;
// it sits beside the plugin's test because both must write the same.
func TestGenerateCommand(t *testing.T) {
	t.Parallel()
	good := `syntax = "proto3";
package t.v1;
import "msgcontract/v1/options.proto";
option go_package = "example.com/t/v1;tv1";
message Paid {
  option (msgcontract.v1.event) = { topic: "t" event_type: "PAID" biz_key: "{id}" };
  string id = 1;
}
`
	tests := []struct {
		name      string
		src       string
		flags     []string
		wantCode  int
		wantOut   string // substring of stdout
		wantErr   string // substring of stderr
		wantFiles int
	}{
		{name: "ok", src: good, flags: []string{"--lang", "go"}, wantCode: 0,
			wantOut: "example.com/t/v1/t.msgcontract.go", wantFiles: 1},
		{name: "source relative", src: good, flags: []string{"--lang", "go", "--paths", "source_relative"}, wantCode: 0,
			wantOut: "t/v1/t.msgcontract.go", wantFiles: 1},
		{name: "with pb", src: good, flags: []string{"--lang", "go", "--with-pb", "--module", "example.com"}, wantCode: 0,
			wantOut: "t/v1/t.msgcontract.go\nt/v1/t.pb.go\n", wantFiles: 2},
		{name: "with pb needs go", src: good, flags: []string{"--lang", "java", "--with-pb"}, wantCode: 2, wantErr: "--with-pb"},
		{name: "nothing to generate", src: strings.Replace(good, "option (msgcontract.v1.event)", "// no event", 1),
			flags: []string{"--lang", "go"}, wantCode: 0, wantErr: "nothing written"},
		{name: "lint errors", src: strings.Replace(good, `"{id}"`, `"{nope}"`, 1), flags: []string{"--lang", "go"},
			wantCode: 1, wantErr: "BIZKEY_UNKNOWN_FIELD"},
		{name: "does not compile", src: good + "message {", flags: []string{"--lang", "go"}, wantCode: 2},
		{name: "no lang", src: good, wantCode: 2, wantErr: "msgcontract generate: --lang and --out are required"},
		{name: "unknown lang", src: good, flags: []string{"--lang", "cobol"}, wantCode: 2, wantErr: `unknown language "cobol"`},
		{name: "bad paths", src: good, flags: []string{"--lang", "go", "--paths", "up"}, wantCode: 2, wantErr: "--paths"},
		{name: "hostile go_package", src: strings.Replace(good, "example.com/t/v1;tv1", "../../x;x", 1),
			flags: []string{"--lang", "go"}, wantCode: 2, wantErr: "escapes the output directory"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			protoDir, out := t.TempDir(), filepath.Join(t.TempDir(), "out")
			file := filepath.Join(protoDir, "t", "v1", "t.proto")
			if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(file, []byte(tc.src), 0o644); err != nil {
				t.Fatal(err)
			}
			var stdout, stderr bytes.Buffer
			args := append([]string{"generate", "--out", out, "-I", protoDir}, tc.flags...)
			code := cli.Execute(context.Background(), append(args, file), &stdout, &stderr)
			if code != tc.wantCode {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, tc.wantCode, stderr.String())
			}
			if !strings.Contains(stdout.String(), tc.wantOut) || !strings.Contains(stderr.String(), tc.wantErr) {
				t.Fatalf("stdout %q, stderr %q; want %q and %q", stdout.String(), stderr.String(), tc.wantOut, tc.wantErr)
			}
			if _, err := os.Stat(out); tc.wantFiles == 0 && err == nil {
				t.Fatalf("exit %d but %s was written", code, out)
			}
			if n := len(tree(t, outOrEmpty(t, out))); n != tc.wantFiles {
				t.Fatalf("%d files written, want %d", n, tc.wantFiles)
			}
		})
	}
}

func outOrEmpty(t *testing.T, dir string) string {
	if _, err := os.Stat(dir); err != nil {
		return t.TempDir()
	}
	return dir
}

// TestBufGenerateMatchesGenerate runs the plugin as a local plugin of buf
// generate (which invokes it once per directory) and compares with
// msgcontract generate. scripts/install-buf.sh (run by scripts/setup.sh)
// installs buf.
func TestBufGenerateMatchesGenerate(t *testing.T) {
	buf := tool(t, "buf")
	work := t.TempDir()
	plugin := filepath.Join(work, "protoc-gen-msgcontract")
	build := exec.Command("go", "build", "-o", plugin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	// One buf module holding the examples and msgcontract's options.
	proto := filepath.Join(work, "proto")
	examples := filepath.Join(repoRoot, "examples", "proto")
	var files []string
	for _, f := range []string{"shop/payment/v1/payment.proto", "shop/inventory/v1/inventory.proto"} {
		copyFile(t, filepath.Join(examples, filepath.FromSlash(f)), filepath.Join(proto, filepath.FromSlash(f)))
		files = append(files, filepath.Join(proto, filepath.FromSlash(f)))
	}
	copyFile(t, filepath.Join(repoRoot, "contracts", "msgcontract", "v1", "options.proto"), filepath.Join(proto, "msgcontract", "v1", "options.proto"))
	writeFile(t, filepath.Join(work, "buf.yaml"), "version: v2\nmodules:\n  - path: proto\n")
	writeFile(t, filepath.Join(work, "buf.gen.yaml"), "version: v2\nplugins:\n  - local: "+plugin+
		"\n    out: gen\n    opt: [lang=go, paths=source_relative]\n")
	cmd := exec.Command(buf, "generate")
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "BUF_CACHE_DIR="+filepath.Join(work, "cache"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("buf generate: %v\n%s", err, out)
	}
	viaCLI := t.TempDir()
	var stdout, stderr bytes.Buffer
	args := []string{"generate", "--lang", "go", "--paths", "source_relative", "--out", viaCLI, "-I", proto}
	if code := cli.Execute(context.Background(), append(args, files...), &stdout, &stderr); code != 0 {
		t.Fatalf("msgcontract generate exited %d: %s", code, stderr.String())
	}
	want, got := tree(t, viaCLI), tree(t, filepath.Join(work, "gen"))
	if len(want) == 0 || len(got) != len(want) {
		t.Fatalf("buf wrote %d files, msgcontract generate %d", len(got), len(want))
	}
	for name, w := range want {
		if !bytes.Equal(got[name], w) {
			t.Errorf("%s: buf generate's output differs from msgcontract generate's", name)
		}
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, to, string(b))
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
