package ruledoc

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestDocCurrent fails when docs/compat-rules.md is not what the rule
// table and the corpus generate.
func TestDocCurrent(t *testing.T) {
	t.Chdir(filepath.Join("..", "..", "..", ".."))
	var b bytes.Buffer
	if err := Render(&b, filepath.Join("testdata", "compat")); err != nil {
		t.Fatal(err)
	}
	have, err := os.ReadFile(filepath.Join("docs", "compat-rules.md"))
	if err != nil {
		t.Fatalf("%v; generate it with %s", err, Command)
	}
	if !bytes.Equal(have, b.Bytes()) {
		t.Fatalf("docs/compat-rules.md is stale; regenerate it with %s", Command)
	}
}

func TestDiff(t *testing.T) {
	t.Parallel()
	got := diff([]string{"a", "b", "c"}, []string{"a", "x", "c", "d"})
	want := []string{" a", "-b", "+x", " c", "+d"} // deletions before insertions
	if len(got) != len(want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("got %q, want %q", got, want)
		}
	}
}
