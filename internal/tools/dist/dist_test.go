package main

import (
	"archive/zip"
	"bytes"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/mod/sumdb/dirhash"
)

// fixture is a repository of two released modules (the root requires sub
// through a development replace) and an unreleased nested one.
var fixture = map[string]string{
	"VERSION":       "1.2.3\n",
	"go.mod":        "module example.com/fix\n\ngo 1.22\n\nrequire example.com/fix/sub v0.0.0\n\n// development\nreplace example.com/fix/sub => ./sub\n",
	"fix.go":        "package fix\n\nimport _ \"example.com/fix/sub\"\n",
	"cmd/x/main.go": "package main\n\nfunc main() {}\n",
	"sub/go.mod":    "module example.com/fix/sub\n\ngo 1.22\n",
	"sub/sub.go":    "package sub\n",
	"bench/go.mod":  "module example.com/fix/bench\n\ngo 1.22\n",
	"bench/b.go":    "package bench\n",
}

var fixtureModules = []string{".", "sub"}

// gitRepo commits fixture, with files in changed replacing or adding to
// it, into a new repository.
func gitRepo(t *testing.T, changed map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	all := map[string]string{}
	for name, body := range fixture {
		all[name] = body
	}
	for name, body := range changed {
		all[name] = body
	}
	for name, body := range all {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"commit", "-q", "-m", "fixture"}} {
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t",
			"GIT_COMMITTER_EMAIL=t@example.com", "GIT_AUTHOR_DATE=2026-01-02T03:04:05Z", "GIT_COMMITTER_DATE=2026-01-02T03:04:05Z")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return dir
}

// files maps every file under dir to its bytes.
func files(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	m := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		m[filepath.ToSlash(rel)], err = os.ReadFile(p)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestGoProxyReproducible(t *testing.T) {
	repo := gitRepo(t, nil)
	// An untracked file is not part of the commit, so not of the release.
	if err := os.WriteFile(filepath.Join(repo, "untracked.go"), []byte("package fix\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	a, b := t.TempDir(), t.TempDir()
	for _, out := range []string{a, b} {
		if err := run(repo, "HEAD", "1.2.3", out, fixtureModules, true, ""); err != nil {
			t.Fatal(err)
		}
	}
	fa, fb := files(t, a), files(t, b)
	if len(fa) != 8 { // list, .info, .mod, .zip of two modules
		t.Errorf("wrote %d files, want 8: %v", len(fa), keys(fa))
	}
	for name, data := range fa {
		if !bytes.Equal(data, fb[name]) {
			t.Errorf("%s differs between two runs on the same commit", name)
		}
	}
	if len(fb) != len(fa) {
		t.Errorf("second run wrote %d files, first %d", len(fb), len(fa))
	}

	root := "goproxy/example.com/fix/@v/"
	sub := "goproxy/example.com/fix/sub/@v/"
	if got := string(fa[root+"list"]); got != "v1.2.3\n" {
		t.Errorf("list = %q", got)
	}
	if got, want := string(fa[root+"v1.2.3.info"]), `{"Version":"v1.2.3","Time":"2026-01-02T03:04:05Z"}`+"\n"; got != want {
		t.Errorf(".info = %q, want %q", got, want)
	}
	mod := string(fa[root+"v1.2.3.mod"])
	if strings.Contains(mod, "replace") || !strings.Contains(mod, "require example.com/fix/sub v1.2.3") {
		t.Errorf("released go.mod requires sub at another version or keeps a replace:\n%s", mod)
	}

	zr := readZip(t, fa[root+"v1.2.3.zip"])
	for _, f := range []string{"go.mod", "go.sum", "fix.go", "cmd/x/main.go", "VERSION"} {
		if _, ok := zr["example.com/fix@v1.2.3/"+f]; !ok {
			t.Errorf("root zip has no %s: %v", f, keys(zr))
		}
	}
	for name := range zr {
		if strings.Contains(name, "/sub/") || strings.Contains(name, "/bench/") || strings.Contains(name, "untracked") {
			t.Errorf("root zip holds %s (a nested module's or an untracked file)", name)
		}
	}
	if got := string(zr["example.com/fix@v1.2.3/go.mod"]); got != mod {
		t.Errorf("go.mod in the zip differs from .mod:\n%s\nvs\n%s", got, mod)
	}
	// go.sum in the zip holds the hashes the go command computes for sub.
	subZip := filepath.Join(a, filepath.FromSlash(sub+"v1.2.3.zip"))
	zh, err := dirhash.HashZip(subZip, dirhash.DefaultHash)
	if err != nil {
		t.Fatal(err)
	}
	mh, err := dirhash.DefaultHash([]string{"go.mod"}, func(string) (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(fa[sub+"v1.2.3.mod"])), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := "example.com/fix/sub v1.2.3 " + zh + "\nexample.com/fix/sub v1.2.3/go.mod " + mh + "\n"
	if got := string(zr["example.com/fix@v1.2.3/go.sum"]); got != want {
		t.Errorf("go.sum in the root zip = %q, want %q", got, want)
	}
}

func TestRefusesDirtyTreeAndOtherVersion(t *testing.T) {
	repo := gitRepo(t, nil)
	if err := run(repo, "HEAD", "1.2.4", t.TempDir(), fixtureModules, true, ""); err == nil || !strings.Contains(err.Error(), "VERSION at ") {
		t.Errorf("a version other than VERSION's: err = %v", err)
	}
	if err := os.WriteFile(filepath.Join(repo, "fix.go"), []byte("package fix // changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("DIST_ALLOW_DIRTY", "")
	if err := run(repo, "HEAD", "1.2.3", t.TempDir(), fixtureModules, true, ""); err == nil || !strings.Contains(err.Error(), "fix.go") {
		t.Errorf("a modified tracked file: err = %v, want a refusal naming fix.go", err)
	}
	t.Setenv("DIST_ALLOW_DIRTY", "1")
	out := t.TempDir()
	if err := run(repo, "HEAD", "1.2.3", out, fixtureModules, true, ""); err != nil {
		t.Fatal(err)
	}
	zr := readZip(t, files(t, out)["goproxy/example.com/fix/@v/v1.2.3.zip"])
	if got := string(zr["example.com/fix@v1.2.3/fix.go"]); got != fixture["fix.go"] {
		t.Errorf("DIST_ALLOW_DIRTY=1 released the work tree's fix.go (%q), not HEAD's", got)
	}
}

func TestReleasedGoModRefusesForeignReplace(t *testing.T) {
	repo := gitRepo(t, map[string]string{"go.mod": fixture["go.mod"] + "replace example.com/other => ../other\n"})
	if err := run(repo, "HEAD", "1.2.3", t.TempDir(), fixtureModules, true, ""); err == nil || !strings.Contains(err.Error(), "example.com/other") {
		t.Errorf("replace of a module outside the release: err = %v", err)
	}
}

func readZip(t *testing.T, data []byte) map[string][]byte {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	m := map[string][]byte{}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		m[f.Name], err = io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	return m
}

func keys[V any](m map[string]V) []string {
	var k []string
	for n := range m {
		k = append(k, n)
	}
	return k
}
