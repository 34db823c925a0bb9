package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// corpusCase is a case directory of the compatibility corpus.
func corpusCase(name string) string { return filepath.Join("..", "..", "testdata", "compat", name) }

// TestBreakingDeletedFile: a message deleted with its file is reported on
// the previous file, where it lived, not on some file of CURRENT.
func TestBreakingDeletedFile(t *testing.T) {
	t.Parallel()
	dir := corpusCase("file-deleted")
	prev, cur := filepath.Join(dir, "prev"), filepath.Join(dir, "cur")
	code, stdout, stderr := run(t, "breaking", "--against", prev, cur)
	want := filepath.Join(prev, "b.proto") + ":4:1: MESSAGE_DELETED: message t.v1.B was deleted"
	if code != 1 || !strings.Contains(stdout, want) {
		t.Fatalf("exit %d, want 1 with %q\nstdout:\n%s\nstderr:\n%s", code, want, stdout, stderr)
	}
	if strings.Contains(stdout, "ENUM_DELETED") {
		t.Errorf("ENUM_DELETED is a CODE rule, reported only with --code:\n%s", stdout)
	}
	if !strings.Contains(stderr, "1 breaking change at level FULL (1 WIRE)") {
		t.Errorf("stderr lacks the summary:\n%s", stderr)
	}
	code, stdout, _ = run(t, "breaking", "--code", "--against", prev, cur)
	if code != 1 || !strings.Contains(stdout, filepath.Join(prev, "b.proto")+":8:1: ENUM_DELETED:") {
		t.Errorf("--code: exit %d, stdout:\n%s", code, stdout)
	}
}

func TestBreakingJSON(t *testing.T) {
	t.Parallel()
	dir := corpusCase("file-deleted")
	code, stdout, stderr := run(t, "breaking", "--format", "json", "--against", filepath.Join(dir, "prev"), filepath.Join(dir, "cur"))
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s", code, stderr)
	}
	var rep jsonReport
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, stdout)
	}
	if rep.Total != 1 || len(rep.Violations) != 1 || rep.ByCategory["WIRE"] != 1 || rep.Level != "FULL" {
		t.Fatalf("report %+v", rep)
	}
	v := rep.Violations[0]
	if v.Rule != "MESSAGE_DELETED" || !v.Previous || v.Line != 4 || v.Column != 1 || filepath.Base(v.File) != "b.proto" || v.Element != "t.v1.B" {
		t.Errorf("violation %+v", v)
	}
	code, stdout, _ = run(t, "breaking", "--format", "json", "--against", filepath.Join(dir, "cur"), filepath.Join(dir, "cur"))
	if code != 0 || !strings.Contains(stdout, `"violations": []`) || !strings.Contains(stdout, `"total": 0`) {
		t.Errorf("clean: exit %d\n%s", code, stdout)
	}
	if code, _, stderr := run(t, "breaking", "--format", "yaml", "--against", dir, dir); code != 2 || !strings.Contains(stderr, "--format") {
		t.Errorf("--format yaml: exit %d\n%s", code, stderr)
	}
}

// TestBreakingCompileErrors: PREV and CURRENT compile at the same time, but
// a file that does not compile is reported as before: exit 2, its
// positioned errors on stderr, PREV's when both fail, nothing on stdout.
func TestBreakingCompileErrors(t *testing.T) {
	t.Parallel()
	good := corpusCase("comment-changed")
	broken := t.TempDir()
	if err := os.WriteFile(filepath.Join(broken, "t.proto"), []byte("syntax = \"proto3\";\npackage t.v1;\nmessage M { string id = 1 }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, prev, cur string }{
		{"PREV", broken, filepath.Join(good, "cur")},
		{"CURRENT", filepath.Join(good, "prev"), broken},
		{"both", broken, broken},
	} {
		code, stdout, stderr := run(t, "breaking", "--against", tc.prev, tc.cur)
		want := filepath.Join(broken, "t.proto") + ":3:27: syntax error"
		if code != 2 || stdout != "" || !strings.Contains(stderr, want) ||
			!strings.Contains(stderr, "msgcontract breaking: 1 compile error; nothing checked") {
			t.Errorf("%s broken: exit %d, want 2 and %q on stderr\nstdout:\n%s\nstderr:\n%s", tc.name, code, want, stdout, stderr)
		}
	}
}

// TestBreakingVendoredOptions: a copy of msgcontract/v1/options.proto kept
// on disk (as protoc and buf need it) is an import, not a contract: having
// it on one side only breaks nothing, and an identical copy is read from
// the compiled-in descriptor (model.Config.Prebuilt) with the same verdicts.
func TestBreakingVendoredOptions(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile(filepath.Join("..", "..", "contracts", "msgcontract", "v1", "options.proto"))
	if err != nil {
		t.Fatal(err)
	}
	vendored := func(side string) string {
		dir := filepath.Join(t.TempDir(), side)
		if err := os.CopyFS(dir, os.DirFS(corpusCase("bool-to-int32/"+side))); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(dir, "msgcontract", "v1"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "msgcontract", "v1", "options.proto"), src, 0o644); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	prev, cur := vendored("prev"), vendored("cur")
	plainPrev, plainCur := corpusCase("bool-to-int32/prev"), corpusCase("bool-to-int32/cur")
	for _, tc := range []struct {
		name, prev, cur string
		code            int
	}{
		{"copy on PREV only", prev, plainPrev, 0},
		{"copy on CURRENT only", plainPrev, prev, 0},
		{"copies on both", prev, cur, 1},
		{"copy on one side, a change", prev, plainCur, 1},
	} {
		code, stdout, stderr := run(t, "breaking", "--against", tc.prev, tc.cur)
		if code != tc.code || strings.Contains(stdout, "options.proto") {
			t.Errorf("%s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", tc.name, code, tc.code, stdout, stderr)
		}
		if tc.code == 1 && !strings.Contains(stdout, "t.proto:4:13: FIELD_TYPE_CHANGED: field t.v1.M.a type changed from bool to int32") {
			t.Errorf("%s: stdout lacks the change:\n%s", tc.name, stdout)
		}
	}
}
