package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestInclude: the printed directory holds exactly contracts/'s files; a
// second call leaves them alone; a corrupted or missing file is rewritten.
func TestInclude(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache) // os.UserCacheDir on Linux
	t.Setenv("HOME", cache)           // and on macOS
	code, stdout, stderr := run(t, "include")
	if code != ExitOK || stderr != "" {
		t.Fatalf("include: exit %d, stderr %q", code, stderr)
	}
	dir := strings.TrimSpace(stdout)
	if !strings.HasPrefix(dir, cache) || filepath.Base(dir) != "include" {
		t.Fatalf("include printed %q, want a directory under %s ending in include", dir, cache)
	}
	check := func() {
		t.Helper()
		for _, name := range IncludeFiles {
			want, err := os.ReadFile(filepath.Join("../../contracts", name))
			if err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				t.Fatalf("include did not write %s: %v", name, err)
			}
			if string(got) != string(want) {
				t.Errorf("%s in %s differs from contracts/%s", name, dir, name)
			}
		}
		entries, err := os.ReadDir(filepath.Join(dir, "msgcontract/v1"))
		if err != nil {
			t.Fatal(err)
		}
		if len(entries) != len(IncludeFiles) {
			t.Errorf("include dir holds %d entries, want %d (a leftover temporary file?)", len(entries), len(IncludeFiles))
		}
	}
	check()

	// Idempotent: the second call prints the same directory and rewrites nothing.
	options := filepath.Join(dir, IncludeFiles[0])
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	if err := os.Chtimes(options, old, old); err != nil {
		t.Fatal(err)
	}
	code, stdout2, _ := run(t, "include")
	if code != ExitOK || stdout2 != stdout {
		t.Fatalf("second include: exit %d, printed %q, want %q", code, stdout2, stdout)
	}
	if fi, err := os.Stat(options); err != nil || !fi.ModTime().Equal(old) {
		t.Errorf("second include rewrote an intact file (mtime %v, want %v)", fi.ModTime(), old)
	}

	// Repaired: a truncated file and a removed one come back.
	if err := os.WriteFile(options, []byte("syntax = \"proto3\";\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, IncludeFiles[1])); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := run(t, "include"); code != ExitOK {
		t.Fatalf("include after corruption: exit %d: %s", code, stderr)
	}
	check()
}

// TestIncludeUnwritable: a cache that cannot be written exits 2 naming the path.
func TestIncludeUnwritable(t *testing.T) {
	// A file where the cache's msgcontract directory belongs stops even root.
	cache := t.TempDir()
	if err := os.WriteFile(filepath.Join(cache, "msgcontract"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_CACHE_HOME", cache)
	t.Setenv("HOME", cache)
	code, stdout, stderr := run(t, "include")
	if code != ExitUsage || stdout != "" {
		t.Fatalf("include into a blocked cache: exit %d, stdout %q, want 2 and nothing", code, stdout)
	}
	if !strings.Contains(stderr, "msgcontract include: writing "+filepath.Join(cache, "msgcontract")) {
		t.Errorf("stderr does not name the path it could not write:\n%s", stderr)
	}
}
