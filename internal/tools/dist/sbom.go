package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"golang.org/x/mod/module"
	modzip "golang.org/x/mod/zip"
)

// The CycloneDX SBOMs of the Go part of a release (docs/release.md, "SBOMs
// and audits"), written by cyclonedx-gomod (the binary scripts/dist/go.sh
// builds at the version security/versions.env pins) and then normalized
// here, deterministically:
//
//   - -noserial -notimestamp: no random serialNumber, no wall-clock time;
//   - the hashes of cyclonedx-gomod's own executable (metadata.tools) are
//     dropped: they depend on the machine that built the tool, not on the
//     release;
//   - in a binary's SBOM, the msgcontract modules the binary was built with
//     through go.mod's replace lines ("./runtime-go", version "(devel)") are
//     named as released: github.com/msgcontract/msgcontract/runtime-go at
//     vX.Y.Z, which is what the binary holds (the files of the same commit);
//   - in a module's SBOM, the module itself (cyclonedx-gomod finds no
//     version outside a git checkout) gets vX.Y.Z;
//   - the JSON is written indented by two spaces, object keys sorted.

// rootModule is the tool module's path: a replace line's "./dir" in its
// go.mod is the module rootModule/dir.
const rootModule = "github.com/msgcontract/msgcontract"

// cdxGomod runs cyclonedx-gomod with args (in dir, with env added; the
// last argument is the binary or module) and returns the SBOM it wrote to
// file.
func cdxGomod(tool, dir string, env []string, file string, args ...string) (map[string]any, error) {
	last := len(args) - 1
	cmd := exec.Command(tool, append(append(args[:last:last], "-output", file), args[last])...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("cyclonedx-gomod %s: %v\n%s", strings.Join(args, " "), err, out.Bytes())
	}
	raw, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var bom map[string]any
	if err := json.Unmarshal(raw, &bom); err != nil {
		return nil, fmt.Errorf("cyclonedx-gomod wrote no JSON to %s: %w", file, err)
	}
	if tools, ok := digMap(bom, "metadata")["tools"].([]any); ok {
		for _, t := range tools {
			if m, ok := t.(map[string]any); ok {
				delete(m, "hashes")
			}
		}
	}
	return bom, nil
}

// binarySBOM writes bin.cdx.json beside the binary bin (a tool module
// command at version).
func binarySBOM(tool, bin, version string, t time.Time) (string, error) {
	out := bin + ".cdx.json"
	bom, err := cdxGomod(tool, filepath.Dir(bin), nil, out,
		"bin", "-json", "-noserial", "-notimestamp", "-version", "v"+version, filepath.Base(bin))
	if err != nil {
		return "", err
	}
	rewriteStrings(bom, "", func(key, s string) string {
		switch {
		case strings.HasPrefix(s, "pkg:golang/./"):
			s = "pkg:golang/" + rootModule + "/" + strings.TrimPrefix(s, "pkg:golang/./")
			return strings.Replace(s, "@(devel)", "@v"+version, 1)
		case key == "name" && strings.HasPrefix(s, "./"):
			return rootModule + "/" + strings.TrimPrefix(s, "./")
		case key == "version" && s == "(devel)":
			return "v" + version
		}
		return s
	})
	return out, writeJSON(out, bom, t)
}

// moduleSBOM writes <escaped path>/@v/vX.Y.Z.cdx.json under proxyDir for
// the module path, from its zip there (extracted into a temporary
// directory), resolving the other released modules from proxyDir.
func moduleSBOM(tool, proxyDir, path, version string, t time.Time) error {
	esc, err := module.EscapePath(path)
	if err != nil {
		return err
	}
	vdir := filepath.Join(proxyDir, filepath.FromSlash(esc), "@v")
	tmp, err := os.MkdirTemp("", "msgcontract-sbom-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	src := filepath.Join(tmp, "src")
	if err := modzip.Unzip(src, module.Version{Path: path, Version: version}, filepath.Join(vdir, version+".zip")); err != nil {
		return fmt.Errorf("extracting %s@%s: %w", path, version, err)
	}
	absProxy, err := filepath.Abs(proxyDir)
	if err != nil {
		return err
	}
	goenv, err := exec.Command("go", "env", "GOPROXY", "GOMODCACHE").Output()
	if err != nil {
		return fmt.Errorf("go env GOPROXY GOMODCACHE: %w", err)
	}
	goproxy, modcache, _ := strings.Cut(strings.TrimSpace(string(goenv)), "\n")
	// A module cache of its own: the machine's may hold an earlier build
	// of this very version (another commit's `make dist`), which the go
	// command would trust over the zips written here and refuse as a
	// checksum mismatch. The machine's cache still serves every other
	// module, as a file proxy after the release's own.
	env := []string{
		"GOWORK=off", "GOFLAGS=-mod=mod -modcacherw", "GOOS=linux", "GOARCH=amd64",
		"GOMODCACHE=" + filepath.Join(tmp, "modcache"),
		"GOPROXY=file://" + filepath.ToSlash(absProxy) + ",file://" + filepath.ToSlash(filepath.Join(modcache, "cache", "download")) + "," + goproxy,
		"GONOSUMDB=" + rootModule + "/*", "GOPRIVATE=", "GONOPROXY=",
	}
	out := filepath.Join(vdir, version+".cdx.json")
	bom, err := cdxGomod(tool, src, env, filepath.Join(tmp, "bom.json"),
		"mod", "-json", "-noserial", "-notimestamp", "-short-purls", "-type", "library", ".")
	if err != nil {
		return err
	}
	comp := digMap(digMap(bom, "metadata"), "component")
	if comp["name"] != path {
		return fmt.Errorf("cyclonedx-gomod named the module %v, not %s", comp["name"], path)
	}
	ref, _ := comp["bom-ref"].(string)
	purl, _ := comp["purl"].(string)
	versioned := func(s string) string {
		base, rest, _ := strings.Cut(s, "?")
		if strings.Contains(base, "@") {
			return s
		}
		if rest != "" {
			rest = "?" + rest
		}
		return base + "@" + version + rest
	}
	rewriteStrings(bom, "", func(key, s string) string {
		if s == ref || s == purl {
			return versioned(s)
		}
		return s
	})
	comp["version"] = version
	return writeJSON(out, bom, t)
}

// rewriteStrings replaces every string value v under the JSON value with
// f(key, v), key being the object key it is the value of ("" in an array).
func rewriteStrings(v any, key string, f func(key, s string) string) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = rewriteStrings(e, k, f)
		}
	case []any:
		for i, e := range x {
			x[i] = rewriteStrings(e, key, f)
		}
	case string:
		return f(key, x)
	}
	return v
}

func digMap(m map[string]any, key string) map[string]any {
	if sub, ok := m[key].(map[string]any); ok {
		return sub
	}
	return map[string]any{}
}

// writeJSON writes v indented, keys sorted, without HTML escaping (a purl's
// & stays &), dated t.
func writeJSON(file string, v any, t time.Time) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	return writeFile(file, buf.Bytes(), t)
}

// sumsFile writes dir/SHA256SUMS: the SHA-256 of every other file under dir
// (paths relative to it, slash-separated, sorted), as sha256sum writes them,
// so that `sha256sum -c SHA256SUMS` in dir checks them.
func sumsFile(dir string, t time.Time) error {
	var names []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		if rel != "SHA256SUMS" {
			names = append(names, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		return err
	}
	sort.Strings(names)
	var sums bytes.Buffer
	for _, n := range names {
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(n)))
		if err != nil {
			return err
		}
		fmt.Fprintf(&sums, "%x  %s\n", sha256.Sum256(data), n)
	}
	return writeFile(filepath.Join(dir, "SHA256SUMS"), sums.Bytes(), t)
}
