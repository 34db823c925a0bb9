package pytestsuite

import (
	"os"
	"path/filepath"
	"testing"
)

// declared counts module-level test functions only: not methods, helpers,
// or functions of files pytest does not collect.
func TestDeclaredCountsModuleLevelTests(t *testing.T) {
	dir := t.TempDir()
	sources := map[string]string{
		"test_a.py":  "def test_one() -> None:\n    pass\n\n\ndef test_two() -> None:\n    pass\n\n\ndef helper() -> None:\n    pass\n",
		"test_b.py":  "class TestX:\n    def test_method(self) -> None:\n        pass\n\n\ndef test_three() -> None:\n    pass\n",
		"helpers.py": "def test_not_collected() -> None:\n    pass\n",
	}
	for name, text := range sources {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if got := declared(t, files(t, dir, nil)); got != 3 {
		t.Fatalf("declared = %d, want 3 (test_one, test_two, test_three)", got)
	}
}

// files keeps what keep takes, and a selection that keeps nothing fails
// rather than running an empty suite that would pass.
func TestFilesKeepsTheSelection(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"test_a.py", "test_delays.py", "conftest.py"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("def test_x() -> None:\n    pass\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	names := func(keep func(string) bool) []string {
		var got []string
		for _, f := range files(t, dir, keep) {
			got = append(got, filepath.Base(f))
		}
		return got
	}
	if got := names(nil); len(got) != 2 || got[0] != "test_a.py" || got[1] != "test_delays.py" {
		t.Fatalf("every file: %v, want [test_a.py test_delays.py]", got)
	}
	if got := names(func(n string) bool { return n != "test_delays.py" }); len(got) != 1 || got[0] != "test_a.py" {
		t.Fatalf("all but the delays: %v, want [test_a.py]", got)
	}
	ft := &fatalTB{TB: t}
	func() {
		defer func() { _ = recover() }()
		files(ft, dir, func(string) bool { return false })
	}()
	if !ft.failed {
		t.Fatal("a selection that keeps no file did not fail")
	}
}

// fatalTB records Fatalf instead of ending the test that runs it.
type fatalTB struct {
	testing.TB
	failed bool
}

func (f *fatalTB) Helper() {}

func (f *fatalTB) Fatalf(string, ...any) {
	f.failed = true
	panic("fatal")
}
