package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// goImportTree writes, under a fresh directory, protos without go_package:
// a plain file, a file that imports msgcontract's options and declares no
// contract, and a contract file importing the plain one; and one with a
// go_package.
func goImportTree(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for name, src := range map[string]string{
		"p/v1/plain.proto": `syntax = "proto3";
package p.v1;
message Plain { string id = 1; }
`,
		"p/v1/options_only.proto": `syntax = "proto3";
package p.v1;
import "msgcontract/v1/options.proto";
message Quiet { string id = 1; }
`,
		"p/v1/paid.proto": `syntax = "proto3";
package p.v1;
import "msgcontract/v1/options.proto";
import "p/v1/plain.proto";
message Paid {
  option (msgcontract.v1.event) = { topic: "t" event_type: "PAID" biz_key: "{id}" };
  string id = 1;
  Plain plain = 2;
}
`,
		"q/v1/shipped.proto": `syntax = "proto3";
package q.v1;
import "msgcontract/v1/options.proto";
option go_package = "example.com/q/v1;qv1";
message Shipped {
  option (msgcontract.v1.event) = { topic: "t" event_type: "SHIPPED" biz_key: "{id}" };
  string id = 1;
}
`,
	} {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestGenerateGoWithoutGoPackage: generate --lang go accepts files it has
// no Go output to write for, go_package or not, as protoc-gen-msgcontract
// does (#43); --go-opt gives files Go import paths as protoc-gen-go's M
// parameters do; and when a file Go output needs has none, the error
// names the file and says how to give it one with this command's flags.
func TestGenerateGoWithoutGoPackage(t *testing.T) {
	t.Parallel()
	dir := goImportTree(t)
	gen := func(args ...string) (int, string, string, map[string]string) {
		t.Helper()
		out := filepath.Join(t.TempDir(), "out")
		args = append([]string{"generate", "--out", out, "-I", dir}, args...)
		code, stdout, stderr := run(t, args...)
		files := map[string]string{}
		if _, err := os.Stat(out); err == nil {
			files = readTree(t, out)
		}
		return code, stdout, stderr, files
	}
	file := func(name string) string { return filepath.Join(dir, filepath.FromSlash(name)) }

	// Nothing to write: exit 0, whatever has a go_package.
	for _, files := range [][]string{
		{"p/v1/plain.proto"},
		{"p/v1/options_only.proto"},
		{"p/v1/plain.proto", "p/v1/options_only.proto"},
	} {
		args := []string{"--lang", "go"}
		for _, f := range files {
			args = append(args, file(f))
		}
		code, _, stderr, written := gen(args...)
		if code != 0 || len(written) != 0 || !strings.Contains(stderr, "nothing written") {
			t.Errorf("%v: exit %d, %d files, stderr %q; want 0, none and \"nothing written\"", files, code, len(written), stderr)
		}
	}

	// Files without Go output beside one with: only its output is
	// written, as if they were not there.
	code, _, stderr, written := gen("--lang", "go", file("q/v1/shipped.proto"), file("p/v1/plain.proto"), file("p/v1/options_only.proto"))
	if _, ok := written["example.com/q/v1/shipped.msgcontract.go"]; code != 0 || len(written) != 1 || !ok {
		t.Errorf("shipped beside plain files: exit %d, files %v, stderr %q; want 0 and example.com/q/v1/shipped.msgcontract.go", code, keys(written), stderr)
	}

	// A contract without an import path, then its import without one.
	for _, tc := range []struct {
		args             []string
		file, importedBy string
	}{
		{[]string{"--lang", "go"}, "p/v1/paid.proto", ""},
		{[]string{"--lang", "go", "--go-opt", "Mp/v1/paid.proto=example.com/p/v1"}, "p/v1/plain.proto", "p/v1/paid.proto"},
		{[]string{"--lang", "go+java", "--go-opt", "Mp/v1/paid.proto=example.com/p/v1"}, "p/v1/plain.proto", "p/v1/paid.proto"},
	} {
		code, _, stderr, written := gen(append(tc.args, file("p/v1/paid.proto"))...)
		want := "--go-opt M" + tc.file + "=<import path>"
		if code != ExitUsage || len(written) != 0 || !strings.Contains(stderr, tc.file+" has no Go import path") ||
			!strings.Contains(stderr, "go_package") || !strings.Contains(stderr, want) || strings.Contains(stderr, `"M" argument`) {
			t.Errorf("%v: exit %d, %d files, stderr %q; want %d, none, and the fix %q", tc.args, code, len(written), stderr, ExitUsage, want)
		}
		if tc.importedBy != "" && !strings.Contains(stderr, tc.importedBy+", which has Go output, imports it") {
			t.Errorf("%v: stderr %q does not name the file importing %s", tc.args, stderr, tc.file)
		}
	}

	// Mappings, one a flag or joined by commas, as protoc's --go_opt: a
	// package name after ";"; a mapping overrides a go_package's import
	// path and, naming no package, keeps its package name, as
	// protoc-gen-go does.
	for _, opts := range [][]string{
		{"--go-opt", "Mp/v1/paid.proto=example.com/p/v1;pv1", "--go-opt", "Mp/v1/plain.proto=example.com/p/v1;pv1", "--go-opt", "Mq/v1/shipped.proto=example.com/moved/q"},
		{"--go-opt", "Mp/v1/paid.proto=example.com/p/v1;pv1,Mp/v1/plain.proto=example.com/p/v1;pv1,Mq/v1/shipped.proto=example.com/moved/q"},
	} {
		args := append([]string{"--lang", "go"}, opts...)
		code, _, stderr, written := gen(append(args, file("p/v1/paid.proto"), file("q/v1/shipped.proto"))...)
		paid, shipped := written["example.com/p/v1/paid.msgcontract.go"], written["example.com/moved/q/shipped.msgcontract.go"]
		if code != 0 || len(written) != 2 || !strings.Contains(paid, "\npackage pv1\n") || !strings.Contains(shipped, "\npackage qv1\n") {
			t.Errorf("%v: exit %d, files %v, stderr %q; want paid.msgcontract.go in package pv1 and shipped's in example.com/moved/q, package qv1", opts, code, keys(written), stderr)
		}
	}

	// --with-pb writes protoc-gen-go's file for every file: every file
	// needs an import path, and is told how.
	code, _, stderr, _ = gen("--lang", "go", "--with-pb", file("p/v1/plain.proto"))
	if code != ExitUsage || !strings.Contains(stderr, "--go-opt Mp/v1/plain.proto=<import path>") {
		t.Errorf("--with-pb, plain file: exit %d, stderr %q; want %d and the --go-opt fix", code, stderr, ExitUsage)
	}
	code, _, stderr, written = gen("--lang", "go", "--with-pb", "--go-opt", "Mp/v1/plain.proto=example.com/p/v1", file("p/v1/plain.proto"))
	if _, ok := written["example.com/p/v1/plain.pb.go"]; code != 0 || len(written) != 1 || !ok {
		t.Errorf("--with-pb, plain file mapped: exit %d, files %v, stderr %q; want example.com/p/v1/plain.pb.go", code, keys(written), stderr)
	}

	// Usage errors, before anything is compiled.
	for _, tc := range []struct {
		args    []string
		wantErr string
	}{
		{[]string{"--lang", "go", "--go-opt", "paths=source_relative"}, `--go-opt "paths=source_relative": protoc-gen-go's paths= is --paths here`},
		{[]string{"--lang", "go", "--go-opt", "module=example.com"}, "is --module here"},
		{[]string{"--lang", "go", "--go-opt", "Ma.proto"}, `--go-opt "Ma.proto": want M<file>=<import path>`},
		{[]string{"--lang", "go", "--go-opt", "M=example.com/a"}, `want M<file>=<import path>`},
		{[]string{"--lang", "go", "--go-opt", "Ma.proto=;apb"}, `want M<file>=<import path>`},
		{[]string{"--lang", "go", "--go-opt", "annotate_code"}, `want M<file>=<import path>`},
		{[]string{"--lang", "java", "--go-opt", "Ma.proto=example.com/a"}, "--go-opt is given but --lang java does not name go"},
	} {
		code, _, stderr, _ := gen(append(tc.args, "does-not-exist.proto")...)
		if code != ExitUsage || !strings.Contains(stderr, tc.wantErr) {
			t.Errorf("%v: exit %d, %q; want %d and %q", tc.args, code, stderr, ExitUsage, tc.wantErr)
		}
	}
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
