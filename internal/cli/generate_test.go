package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestGeneratePositionsEmitterChecks: generate drops protocompile's syntax
// trees before lint's emitter checks run (they need them only for a
// problem's position); a problem only those checks find (a Python
// keyword) is still reported at its line and column, as lint reports it,
// with and without --with-pb, and nothing is written.
func TestGeneratePositionsEmitterChecks(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "t", "v1", "t.proto")
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	src := `syntax = "proto3";
package t.v1;
import "msgcontract/v1/options.proto";
option go_package = "example.com/t/v1;tv1";
message Paid {
  option (msgcontract.v1.event) = { topic: "t" event_type: "PAID" biz_key: "{id}" };
  string id = 1;
}
enum Kind {
  KIND_UNSPECIFIED = 0;
    None = 1;
}
`
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	want := file + ":11:5: PYTHON_KEYWORD_NAME: enum value None"
	code, lintOut, _ := run(t, "lint", "-I", dir, file)
	if code != 1 || !strings.Contains(lintOut, want) {
		t.Fatalf("lint: exit %d, stdout %q; want 1 and %q", code, lintOut, want)
	}
	for _, flags := range [][]string{{"--lang", "go"}, {"--lang", "go", "--with-pb"}} {
		out := filepath.Join(t.TempDir(), "out")
		args := append([]string{"generate", "--out", out, "-I", dir}, flags...)
		code, _, stderr := run(t, append(args, file)...)
		if code != 1 || !strings.Contains(stderr, want) || !strings.Contains(stderr, "1 lint problem; nothing written") {
			t.Fatalf("%v: exit %d, stderr %q; want 1 and %q", flags, code, stderr, want)
		}
		if _, err := os.Stat(out); err == nil {
			t.Fatalf("%v: %s written", flags, out)
		}
	}
}

// versionless matches the generator's version line, which is the test
// binary's.
var versionless = regexp.MustCompile(`(?m)^// \tprotoc-gen-msgcontract .*$`)

// TestGenerateWithPBIsCommitted: generate --with-pb lets go of
// protocompile's source info once protogen's view has read it (the Go
// emitter then takes comments from the view); the examples' four files,
// doc comments from the .proto included, are still byte for byte the
// committed ones, which the library emitters write (examplegen).
func TestGenerateWithPBIsCommitted(t *testing.T) {
	t.Chdir("../..")
	out := t.TempDir()
	code, _, stderr := run(t, "generate", "--lang", "go", "--with-pb", "--quiet", "--out", out,
		"--module", "github.com/msgcontract/msgcontract", "-I", "examples/proto",
		"examples/proto/shop/payment/v1/payment.proto", "examples/proto/shop/inventory/v1/inventory.proto")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var n int
	err := filepath.WalkDir(out, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(out, path)
		got, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		want, err := os.ReadFile(rel)
		if err != nil {
			return err
		}
		if !bytes.Equal(versionless.ReplaceAll(got, nil), versionless.ReplaceAll(want, nil)) {
			t.Errorf("%s differs from the committed file (but the version line)", rel)
		}
		if strings.HasSuffix(rel, "payment.msgcontract.go") {
			for _, c := range []string{"the payment provider confirmed that an order was paid", "the lifecycle of an order's payment"} {
				if !bytes.Contains(got, []byte(c)) {
					t.Errorf("%s: the comment %q from the .proto is missing", rel, c)
				}
			}
		}
		n++
		return nil
	})
	if err != nil || n != 4 {
		t.Fatalf("%d files (%v), want 4", n, err)
	}
}

// TestGenerateSeveralLanguages: --lang go+java+python compiles and lints
// once and writes into --out/go, --out/java and --out/python exactly what
// a run a language writes (--paths, --module and --with-pb being Go's),
// comments from the .proto included; --java-dir and --python-dir move
// those files; a bad language list or folder is a usage error before
// anything is compiled.
func TestGenerateSeveralLanguages(t *testing.T) {
	t.Chdir("../..")
	files := []string{"-I", "examples/proto", "examples/proto/shop/payment/v1/payment.proto", "examples/proto/shop/inventory/v1/inventory.proto"}
	goFlags := []string{"--with-pb", "--module", "github.com/msgcontract/msgcontract"}
	all, sep := t.TempDir(), t.TempDir()
	gen := func(args ...string) {
		t.Helper()
		if code, _, stderr := run(t, append(append([]string{"generate", "--quiet"}, args...), files...)...); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
	}
	gen(append([]string{"--lang", "go+java+python", "--out", all}, goFlags...)...)
	gen(append([]string{"--lang", "go", "--out", filepath.Join(sep, "go")}, goFlags...)...)
	gen("--lang", "java", "--out", filepath.Join(sep, "java"))
	gen("--lang", "python", "--out", filepath.Join(sep, "python"))
	want := readTree(t, sep)
	got := readTree(t, all)
	if len(want) != 8 || len(got) != len(want) {
		t.Fatalf("%d files written, want %d (8)", len(got), len(want))
	}
	for name, content := range want {
		if got[name] != content {
			t.Errorf("%s: not what --lang %s alone writes", name, strings.Split(name, "/")[0])
		}
	}
	if !strings.Contains(got["java/com/example/shop/payment/v1/PaymentContract.java"], "the payment provider confirmed that an order was paid") {
		t.Error("PaymentContract.java lost the .proto's comment")
	}

	// --java-dir and --python-dir move those languages' files and
	// nothing else.
	moved := t.TempDir()
	gen(append([]string{"--lang", "go+java+python", "--out", moved, "--java-dir", "src/main/java", "--python-dir", "gen/py/"}, goFlags...)...)
	got = readTree(t, moved)
	if len(got) != len(want) {
		t.Fatalf("with --java-dir and --python-dir: %d files written, want %d", len(got), len(want))
	}
	for name, content := range want {
		movedName := name
		for from, to := range map[string]string{"java/": "src/main/java/", "python/": "gen/py/"} {
			if rest, ok := strings.CutPrefix(name, from); ok {
				movedName = to + rest
			}
		}
		if got[movedName] != content {
			t.Errorf("%s: missing or not what --lang %s alone writes", movedName, strings.Split(name, "/")[0])
		}
	}

	for _, tc := range []struct {
		args    []string
		wantErr string
	}{
		{[]string{"--lang", "go+go"}, "--lang go+go names go twice"},
		{[]string{"--lang", "go+cobol"}, `unknown language "cobol" in --lang go+cobol`},
		{[]string{"--lang", "java+python", "--with-pb"}, `--with-pb writes Go protobuf code`},
		{[]string{"--lang", "java+python", "--go-dir", "g"}, "--go-dir is given but --lang java+python does not name go"},
		{[]string{"--lang", "java", "--java-dir", "j"}, "--java-dir applies when --lang names several languages"},
		{[]string{"--lang", "go+java", "--java-dir", "../j"}, `--java-dir "../j": want a relative folder inside the output directory`},
		{[]string{"--lang", "go+java", "--java-dir", ""}, `--java-dir "": want a relative folder`},
		{[]string{"--lang", "go+java", "--java-dir", "go"}, `--go-dir and --java-dir are both "go"`},
	} {
		args := append([]string{"generate", "--out", t.TempDir()}, tc.args...)
		code, _, stderr := run(t, append(args, "does-not-exist.proto")...)
		if code != ExitUsage || !strings.Contains(stderr, tc.wantErr) {
			t.Errorf("%v: exit %d, %q; want %d and %q", tc.args, code, stderr, ExitUsage, tc.wantErr)
		}
	}
}

// readTree is every file under dir by its slash-separated relative name.
func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		rel, _ := filepath.Rel(dir, path)
		out[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
