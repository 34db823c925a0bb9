package emittest_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/msgcontract/msgcontract/codegen/emit"
	"github.com/msgcontract/msgcontract/codegen/emit/emittest"
)

// recorder collects a check's failures instead of failing the test.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}
func (r *recorder) Helper() {}

func TestGoldenFindsEveryKindOfStaleness(t *testing.T) {
	dir := t.TempDir()
	files := []emit.File{{Name: "a/one.txt", Content: []byte("1")}, {Name: "two.txt", Content: []byte("2")}}
	emittest.Golden(t, dir, files, true, "make golden")
	fresh := &recorder{TB: t}
	check(fresh, dir, files)
	if len(fresh.errs) != 0 {
		t.Fatalf("a fresh golden tree is reported stale: %v", fresh.errs)
	}
	for name, tc := range map[string]struct {
		files []emit.File
		want  string
	}{
		"changed": {[]emit.File{{Name: "a/one.txt", Content: []byte("one")}, files[1]}, "a/one.txt: stale golden file"},
		"added":   {append(files[:2:2], emit.File{Name: "three.txt"}), "three.txt: generated but has no golden file"},
		"dropped": {files[:1], "two.txt: golden file under"},
	} {
		r := &recorder{TB: t}
		check(r, dir, tc.files)
		if len(r.errs) != 1 || !strings.Contains(r.errs[0], tc.want) || !strings.Contains(r.errs[0], "make golden") {
			t.Errorf("%s: errors %q, want one containing %q and the refresh command", name, r.errs, tc.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "a", "one.txt")); err != nil {
		t.Fatal("a check without update changed the tree")
	}
}

func check(r *recorder, dir string, files []emit.File) {
	emittest.Golden(r, dir, files, false, "make golden")
}
