// Package emittest checks generated files against golden files, for the
// golden tests of every language's generator: one place decides what
// "stale" means (a file differs, is missing, or is no longer generated)
// and how -update rewrites the tree.
package emittest

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/msgcontract/msgcontract/codegen/emit"
)

// Golden compares files with the tree under dir. With update set it
// replaces the tree by files instead. refresh is the command that
// rewrites the goldens, named in every failure.
func Golden(t testing.TB, dir string, files []emit.File, update bool, refresh string) {
	t.Helper()
	if update {
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			p := filepath.Join(dir, filepath.FromSlash(f.Name))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, f.Content, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	want := ReadTree(t, dir)
	got := map[string][]byte{}
	for _, f := range files {
		got[f.Name] = f.Content
	}
	onlyGot, onlyWant, differ := diffTrees(got, want)
	for _, name := range onlyGot {
		t.Errorf("%s: generated but has no golden file under %s; run %s", name, dir, refresh)
	}
	for _, name := range differ {
		t.Errorf("%s: stale golden file under %s; run %s and review the diff", name, dir, refresh)
	}
	for _, name := range onlyWant {
		t.Errorf("%s: golden file under %s is no longer generated; run %s", name, dir, refresh)
	}
}

// ReadTree reads every file under dir, keyed by slash-separated path
// relative to dir. A missing dir is an empty tree.
func ReadTree(t testing.TB, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		out[filepath.ToSlash(rel)] = b
		return nil
	})
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return out
}

func sortedKeys(m map[string][]byte) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// SameTrees fails for every file that only one of two trees holds and for
// every file whose bytes differ: want was written by wantBy, got by gotBy
// (the names the failures give, e.g. "msgcontract generate" and "protoc").
func SameTrees(t testing.TB, want, got map[string][]byte, wantBy, gotBy string) {
	t.Helper()
	onlyWant, onlyGot, differ := diffTrees(want, got)
	for _, name := range onlyWant {
		t.Errorf("%s: written by %s, not by %s", name, wantBy, gotBy)
	}
	for _, name := range differ {
		t.Errorf("%s: %s's output differs from %s's", name, gotBy, wantBy)
	}
	for _, name := range onlyGot {
		t.Errorf("%s: written by %s, not by %s", name, gotBy, wantBy)
	}
}

// diffTrees compares two trees of files by name: the names only a holds,
// those only b holds, and those both hold with other bytes, each sorted.
func diffTrees(a, b map[string][]byte) (onlyA, onlyB, differ []string) {
	for _, name := range sortedKeys(a) {
		bb, ok := b[name]
		switch {
		case !ok:
			onlyA = append(onlyA, name)
		case !bytes.Equal(a[name], bb):
			differ = append(differ, name)
		}
	}
	for _, name := range sortedKeys(b) {
		if _, ok := a[name]; !ok {
			onlyB = append(onlyB, name)
		}
	}
	return onlyA, onlyB, differ
}
