package main_test

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/msgcontract/msgcontract/codegen/emit/emittest"
	"github.com/msgcontract/msgcontract/internal/cli"
)

// tool finds a command on PATH or in GOPATH/bin. Missing, it fails the
// test under CI=true (scripts/setup.sh installs it) and skips otherwise.
func tool(t *testing.T, name string) string {
	t.Helper()
	// scripts/install-buf.sh puts buf in the checkout's .tools/bin.
	if p, err := filepath.Abs(filepath.Join("..", "..", ".tools", "bin", name)); err == nil && fileExists(p) {
		return p
	}
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	out, _ := exec.Command("go", "env", "GOPATH").Output()
	if p := filepath.Join(strings.TrimSpace(string(out)), "bin", name); fileExists(p) {
		return p
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s is not installed; scripts/setup.sh installs it", name)
	}
	t.Skipf("%s not found on PATH or in GOPATH/bin; run scripts/setup.sh", name)
	return ""
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// corpusPackages groups the edge corpus's files by directory, as protoc
// invocations per package and buf's default strategy see them.
func corpusPackages(t *testing.T, root string) map[string][]string {
	t.Helper()
	pkgs := map[string][]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".proto") {
			return err
		}
		rel, err := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		pkgs[path.Dir(rel)] = append(pkgs[path.Dir(rel)], rel)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return pkgs
}

var langOpts = map[string]string{"go": "lang=go,paths=source_relative", "java": "lang=java", "python": "lang=python"}

// cliPerPackage runs msgcontract generate once per package, as a build
// system would, into out/<lang>.
func cliPerPackage(t *testing.T, root, out string, pkgs map[string][]string) {
	t.Helper()
	for lang := range langOpts {
		for _, files := range pkgs {
			args := []string{"generate", "--lang", lang, "--out", filepath.Join(out, lang), "-I", root}
			if lang == "go" {
				args = append(args, "--paths", "source_relative")
			}
			for _, f := range files {
				args = append(args, filepath.Join(root, filepath.FromSlash(f)))
			}
			var stdout, stderr bytes.Buffer
			if code := cli.Execute(context.Background(), args, &stdout, &stderr); code != 0 {
				t.Fatalf("msgcontract generate %v exited %d: %s", files, code, stderr.String())
			}
		}
	}
}

// sameTrees compares the tree under got, written by what, with msgcontract
// generate's under want.
func sameTrees(t *testing.T, what, want, got string) {
	t.Helper()
	w := tree(t, want)
	if len(w) == 0 {
		t.Fatal("msgcontract generate wrote nothing")
	}
	emittest.SameTrees(t, w, tree(t, got), "msgcontract generate", what)
}

// TestPerPackageProtocAndBuf generates the edge corpus one package at a
// time, the way protoc is driven in monorepo builds and buf generate
// drives plugins, in Go, Java and Python: target_state and placeholders
// that reach into imported packages must resolve, and every file must be
// byte-identical to msgcontract generate's for the same package.
func TestPerPackageProtocAndBuf(t *testing.T) {
	protoc, buf := tool(t, "protoc"), tool(t, "buf")
	work := t.TempDir()
	plugin := filepath.Join(work, "protoc-gen-msgcontract")
	if out, err := exec.Command("go", "build", "-o", plugin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	root, err := filepath.Abs(filepath.Join(repoRoot, "testdata", "corpus", "proto"))
	if err != nil {
		t.Fatal(err)
	}
	pkgs := corpusPackages(t, root)
	viaCLI := filepath.Join(work, "cli")
	cliPerPackage(t, root, viaCLI, pkgs)

	t.Run("protoc", func(t *testing.T) {
		// Debian's protoc predates editions (protoc 27): leave those
		// packages to buf, and say so.
		ppkgs := pkgs
		if v, _ := exec.Command(protoc, "--version").Output(); protocBefore27(string(v)) {
			ppkgs = map[string][]string{}
			for dir, files := range pkgs {
				if src, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(files[0]))); err == nil && strings.HasPrefix(string(src), "edition") {
					t.Logf("%s: editions; %s cannot read it, buf generate covers it", dir, strings.TrimSpace(string(v)))
					continue
				}
				ppkgs[dir] = files
			}
		}
		viaCLI := filepath.Join(work, "cli-protoc")
		cliPerPackage(t, root, viaCLI, ppkgs)
		pkgs := ppkgs
		out := filepath.Join(work, "protoc")
		for lang, opt := range langOpts {
			dir := filepath.Join(out, lang)
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			for _, files := range pkgs {
				args := []string{"--plugin=protoc-gen-msgcontract=" + plugin, "-I", root,
					"-I", filepath.Join(repoRoot, "contracts"), "--msgcontract_out=" + opt + ":" + dir}
				for _, f := range files {
					args = append(args, filepath.Join(root, filepath.FromSlash(f)))
				}
				if out, err := exec.Command(protoc, args...).CombinedOutput(); err != nil {
					t.Fatalf("protoc %v: %v\n%s", files, err, out)
				}
			}
		}
		sameTrees(t, "protoc", viaCLI, out)

		// The three languages in one invocation a package write the same
		// files into the same folders.
		once := filepath.Join(work, "protoc-once")
		if err := os.MkdirAll(once, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, files := range pkgs {
			args := []string{"--plugin=protoc-gen-msgcontract=" + plugin, "-I", root, "-I", filepath.Join(repoRoot, "contracts"),
				"--msgcontract_out=lang=go+java+python,paths=source_relative:" + once}
			for _, f := range files {
				args = append(args, filepath.Join(root, filepath.FromSlash(f)))
			}
			if out, err := exec.Command(protoc, args...).CombinedOutput(); err != nil {
				t.Fatalf("protoc %v: %v\n%s", files, err, out)
			}
		}
		sameTrees(t, "protoc lang=go+java+python", viaCLI, once)
	})

	t.Run("buf", func(t *testing.T) {
		mod := filepath.Join(work, "bufmod")
		proto := filepath.Join(mod, "proto")
		for _, files := range pkgs {
			for _, f := range files {
				copyFile(t, filepath.Join(root, filepath.FromSlash(f)), filepath.Join(proto, filepath.FromSlash(f)))
			}
		}
		copyFile(t, filepath.Join(repoRoot, "contracts", "msgcontract", "v1", "options.proto"), filepath.Join(proto, "msgcontract", "v1", "options.proto"))
		writeFile(t, filepath.Join(mod, "buf.yaml"), "version: v2\nmodules:\n  - path: proto\n")
		// An entry a language, as buf.gen.yaml files usually list plugins,
		// and one entry for the three (README's advice: a third of the
		// plugin runs), write the same tree.
		threeEntries := "version: v2\nplugins:\n"
		for _, lang := range []string{"go", "java", "python"} {
			threeEntries += "  - local: " + plugin + "\n    out: gen-three/" + lang + "\n    opt: [" + langOpts[lang] + "]\n"
		}
		oneEntry := "version: v2\nplugins:\n  - local: " + plugin + "\n    out: gen-one\n    opt: [lang=go+java+python, paths=source_relative]\n"
		for _, c := range []struct{ name, gen, out string }{
			{"an entry a language", threeEntries, "gen-three"},
			{"one entry, lang=go+java+python", oneEntry, "gen-one"},
		} {
			writeFile(t, filepath.Join(mod, "buf.gen.yaml"), c.gen)
			cmd := exec.Command(buf, "generate", "--exclude-path", "proto/msgcontract")
			cmd.Dir = mod
			cmd.Env = append(os.Environ(), "BUF_CACHE_DIR="+filepath.Join(work, "bufcache"))
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("buf generate (%s): %v\n%s", c.name, err, out)
			}
			sameTrees(t, "buf generate, "+c.name, viaCLI, filepath.Join(mod, c.out))
		}
	})
}

// protocBefore27 reports whether "libprotoc X.Y[.Z]" is older than 27.
func protocBefore27(version string) bool {
	f := strings.Fields(version)
	if len(f) < 2 {
		return true
	}
	major, _, _ := strings.Cut(f[len(f)-1], ".")
	n := 0
	for _, c := range major {
		if c < '0' || c > '9' {
			return true
		}
		n = n*10 + int(c-'0')
	}
	return n < 27
}
