package pytestsuite

import (
	"os"
	"path/filepath"
	"testing"
)

// Declared counts module-level test functions only: not methods, helpers,
// or functions of files pytest does not collect.
func TestDeclaredCountsModuleLevelTests(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"test_a.py":  "def test_one() -> None:\n    pass\n\n\ndef test_two() -> None:\n    pass\n\n\ndef helper() -> None:\n    pass\n",
		"test_b.py":  "class TestX:\n    def test_method(self) -> None:\n        pass\n\n\ndef test_three() -> None:\n    pass\n",
		"helpers.py": "def test_not_collected() -> None:\n    pass\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if got := Declared(t, dir); got != 3 {
		t.Fatalf("Declared = %d, want 3 (test_one, test_two, test_three)", got)
	}
}
