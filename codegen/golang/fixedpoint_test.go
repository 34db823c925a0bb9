package golang

import (
	"bytes"
	"go/format"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGofmtFixedPoint: gofmt leaves every committed generated Go file (the
// goldens and the examples' generated code) as it is, so the canonical
// form the writer produces cannot drift from gofmt's silently. Emitted
// files are checked the same way as they are compared with the jennifer
// emitter (isCanonical in compareEach).
func TestGofmtFixedPoint(t *testing.T) {
	t.Parallel()
	n := 0
	for _, dir := range []string{"testdata/golden/go", "examples/gen/go"} {
		err := filepath.WalkDir(filepath.Join("..", "..", filepath.FromSlash(dir)), func(path string, d fs.DirEntry, err error) error {
			if err != nil || !strings.HasSuffix(path, Suffix) {
				return err
			}
			src, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			if err := isCanonical(src); err != nil {
				t.Errorf("%s: %v", path, err)
			}
			n++
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if n < 6 {
		t.Fatalf("checked %d files; goldens or examples moved?", n)
	}
}

// isCanonical fails unless gofmt(src) == src.
func isCanonical(src []byte) error {
	out, err := format.Source(src)
	if err != nil {
		return err
	}
	if !bytes.Equal(out, src) {
		return &notCanonical{firstDiff(src, out)}
	}
	return nil
}

type notCanonical struct{ diff string }

func (e *notCanonical) Error() string { return "gofmt changes it:\n" + e.diff }
