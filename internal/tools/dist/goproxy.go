package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"
	"golang.org/x/mod/sumdb/dirhash"
	modzip "golang.org/x/mod/zip"
)

// released is one module of a release: its directory in the tree ("." for
// the root) and, once read, its path and go.mod.
type released struct {
	dir  string
	path string
	mod  *modfile.File
}

// proxy writes the Go module proxy layout for the modules in dirs (relative
// to tree) at version into out: <escaped path>/@v/list, .info, .mod, .zip.
// Each module's go.mod is rewritten to require the other released modules at
// version and to carry no replace line; its go.sum gains the h1: hashes of
// the released modules it requires, computed from the zips written here.
// tree is rewritten in place (released go.mod and go.sum), so it must be a
// throwaway copy.
func proxy(tree string, dirs []string, version string, commitTime time.Time, out string) error {
	if !semver.IsValid(version) || semver.Canonical(version) != version {
		return fmt.Errorf("version %q is not a canonical semantic version vX.Y.Z", version)
	}
	mods := map[string]*released{}
	var order []*released
	for _, dir := range dirs {
		file := filepath.Join(tree, dir, "go.mod")
		raw, err := os.ReadFile(file)
		if err != nil {
			return fmt.Errorf("module %s: %w", dir, err)
		}
		mf, err := modfile.Parse(file, raw, nil)
		if err != nil {
			return err
		}
		if mf.Module == nil {
			return fmt.Errorf("%s/go.mod has no module line", dir)
		}
		r := &released{dir: dir, path: mf.Module.Mod.Path, mod: mf}
		mods[r.path] = r
		order = append(order, r)
	}
	// A module's zip holds the hashes of the released modules it requires:
	// write those first.
	done := map[string]bool{}
	var hashes = map[string][2]string{} // path -> zip hash, go.mod hash
	for len(done) < len(order) {
		progress := false
		for _, r := range order {
			if done[r.path] || !requiresDone(r, mods, done) {
				continue
			}
			zh, mh, err := writeModule(tree, r, mods, hashes, version, commitTime, out)
			if err != nil {
				return fmt.Errorf("module %s (%s): %w", r.path, r.dir, err)
			}
			hashes[r.path] = [2]string{zh, mh}
			done[r.path] = true
			progress = true
		}
		if !progress {
			return fmt.Errorf("the released modules require each other in a cycle")
		}
	}
	return nil
}

func requiresDone(r *released, mods map[string]*released, done map[string]bool) bool {
	for _, req := range r.mod.Require {
		if mods[req.Mod.Path] != nil && req.Mod.Path != r.path && !done[req.Mod.Path] {
			return false
		}
	}
	return true
}

// releasedGoMod is r's go.mod as released: every released module it
// requires at version, no replace line (go install refuses a module that
// has one). A replace of anything else is an error: the release would build
// differently from the tree.
func releasedGoMod(r *released, mods map[string]*released, version string) ([]byte, []string, error) {
	mf := r.mod
	var deps []string
	for _, req := range mf.Require {
		if mods[req.Mod.Path] != nil {
			if err := mf.AddRequire(req.Mod.Path, version); err != nil {
				return nil, nil, err
			}
			deps = append(deps, req.Mod.Path)
		}
	}
	for _, rep := range append([]*modfile.Replace(nil), mf.Replace...) {
		if mods[rep.Old.Path] == nil {
			return nil, nil, fmt.Errorf("go.mod replaces %s, which is not a module of this release: a released go.mod can carry no replace (go install refuses it); make the code part of a released module instead", rep.Old.Path)
		}
		if err := mf.DropReplace(rep.Old.Path, rep.Old.Version); err != nil {
			return nil, nil, err
		}
	}
	mf.Cleanup()
	raw, err := mf.Format()
	if err != nil {
		return nil, nil, err
	}
	sort.Strings(deps)
	return raw, deps, nil
}

func writeModule(tree string, r *released, mods map[string]*released, hashes map[string][2]string, version string, commitTime time.Time, out string) (zipHash, modHash string, err error) {
	gomod, deps, err := releasedGoMod(r, mods, version)
	if err != nil {
		return "", "", err
	}
	dir := filepath.Join(tree, r.dir)
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), gomod, 0o644); err != nil {
		return "", "", err
	}
	var add []string
	for _, d := range deps {
		h := hashes[d]
		add = append(add, fmt.Sprintf("%s %s %s", d, version, h[0]), fmt.Sprintf("%s %s/go.mod %s", d, version, h[1]))
	}
	if err := mergeGoSum(filepath.Join(dir, "go.sum"), add, mods); err != nil {
		return "", "", err
	}
	for _, f := range []string{"go.mod", "go.sum"} {
		p := filepath.Join(dir, f)
		if _, err := os.Stat(p); err == nil {
			if err := os.Chtimes(p, commitTime, commitTime); err != nil {
				return "", "", err
			}
		}
	}

	esc, err := module.EscapePath(r.path)
	if err != nil {
		return "", "", err
	}
	vdir := filepath.Join(out, filepath.FromSlash(esc), "@v")
	if err := os.MkdirAll(vdir, 0o755); err != nil {
		return "", "", err
	}
	base := filepath.Join(vdir, version)
	mv := module.Version{Path: r.path, Version: version}
	var zbuf bytes.Buffer
	if err := modzip.CreateFromDir(&zbuf, mv, dir); err != nil {
		return "", "", fmt.Errorf("zip: %w", err)
	}
	info, err := json.Marshal(struct {
		Version string
		Time    string
	}{version, commitTime.UTC().Format(time.RFC3339)})
	if err != nil {
		return "", "", err
	}
	files := []struct {
		name string
		data []byte
	}{
		{base + ".zip", zbuf.Bytes()},
		{base + ".mod", gomod},
		{base + ".info", append(info, '\n')},
		{filepath.Join(vdir, "list"), []byte(version + "\n")},
	}
	for _, f := range files {
		if err := writeFile(f.name, f.data, commitTime); err != nil {
			return "", "", err
		}
	}
	zipHash, err = dirhash.HashZip(base+".zip", dirhash.DefaultHash)
	if err != nil {
		return "", "", err
	}
	modHash, err = dirhash.DefaultHash([]string{"go.mod"}, func(string) (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(gomod)), nil
	})
	if err != nil {
		return "", "", err
	}
	return zipHash, modHash, nil
}

// mergeGoSum adds lines to the go.sum at file (created when missing), drops
// lines of released modules at other versions (v0.0.0 of a development
// checkout) and sorts it as the go command does.
func mergeGoSum(file string, add []string, mods map[string]*released) error {
	raw, err := os.ReadFile(file)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	if len(add) == 0 && err != nil {
		return nil // no go.sum, nothing to add
	}
	seen := map[string]bool{}
	var lines []string
	for _, l := range append(strings.Split(string(raw), "\n"), add...) {
		l = strings.TrimSpace(l)
		if l == "" || seen[l] {
			continue
		}
		f := strings.Fields(l)
		if len(f) != 3 {
			return fmt.Errorf("%s: malformed line %q", file, l)
		}
		if mods[f[0]] != nil && !containsLine(add, l) {
			continue
		}
		seen[l] = true
		lines = append(lines, l)
	}
	sort.Slice(lines, func(i, j int) bool {
		a, b := strings.Fields(lines[i]), strings.Fields(lines[j])
		if a[0] != b[0] {
			return a[0] < b[0]
		}
		va, vb := strings.TrimSuffix(a[1], "/go.mod"), strings.TrimSuffix(b[1], "/go.mod")
		if c := semver.Compare(va, vb); c != 0 {
			return c < 0
		}
		return a[1] < b[1]
	})
	return os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
}

func containsLine(lines []string, l string) bool {
	for _, x := range lines {
		if x == l {
			return true
		}
	}
	return false
}

// writeFile writes data to name with its modification time set to t, so
// that an archive of the directory is the same from run to run.
func writeFile(name string, data []byte, t time.Time) error {
	if err := os.WriteFile(name, data, 0o644); err != nil {
		return err
	}
	return os.Chtimes(name, t, t)
}
