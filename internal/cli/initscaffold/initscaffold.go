// Package initscaffold renders the service `msgcontract init` writes: a
// starter contract, buf and protoc configuration that find msgcontract's
// options, the language's build file requiring the runtime of the binary's
// release, and a program that runs one event through producer and
// consumer. The templates live under templates/: common/ for every
// language, <lang>/ for one; "NAME" in a path is the service's name and
// ".tmpl" is dropped.
package initscaffold

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"text/template"
)

//go:embed all:templates
var templates embed.FS

// Langs are the languages init scaffolds.
var Langs = []string{"go", "java", "python"}

// Options say what to render.
type Options struct {
	Lang    string // go, java or python
	Name    string // the service: proto package <name>.v1, Go module example.com/<name>, ...
	Version string // the runtimes' release, without a leading v: 0.3.0
}

// data is what the templates see.
type data struct {
	Name    string // payments
	Camel   string // Payments: the Java contract class is <Camel>Contract
	Version string // 0.3.0
	Module  string // example.com/payments
	Lang    string
}

var nameRE = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// reserved are names the scaffold cannot take: keywords of Go, Java or
// Python (the name is a package in each) and the proto packages the
// runtimes already hold.
var reserved = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`
		break case chan const continue default defer else fallthrough for func go goto if import
		interface map package range return select struct switch type var
		abstract assert boolean byte catch char class do double enum extends final finally float
		implements instanceof int long native new private protected public short static strictfp
		super synchronized this throw throws transient try void volatile true false null record
		yield sealed permits and as async await del elif except from global in is lambda nonlocal
		not or pass raise while with none
		msgcontract google`) {
		reserved[w] = true
	}
}

// ValidateName accepts a name usable as a proto package component, a Go
// package, a Java package segment and a Python package alike.
func ValidateName(name string) error {
	if !nameRE.MatchString(name) {
		hint := strings.Trim(regexp.MustCompile(`[^a-z0-9_]+`).ReplaceAllString(strings.ToLower(name), "_"), "_")
		if hint != "" && (hint[0] < 'a' || hint[0] > 'z') {
			hint = "svc_" + hint
		}
		if hint == "" {
			hint = "payments"
		}
		return fmt.Errorf("name %q is not a lower-case identifier ([a-z][a-z0-9_]*: it becomes the proto, Go, Java and Python package); pass --name %s", name, hint)
	}
	if reserved[name] {
		return fmt.Errorf("name %q is a keyword of Go, Java or Python, or a package msgcontract uses; pass --name %s_service", name, name)
	}
	return nil
}

// camel is protoc's UnderscoresToCamelCase for [a-z0-9_] names, as the
// Java generator names the contract class.
func camel(s string) string {
	var b strings.Builder
	up := true
	for _, c := range s {
		switch {
		case c == '_':
			up = true
		case c >= '0' && c <= '9':
			b.WriteRune(c)
			up = true
		case up:
			b.WriteRune(c - 'a' + 'A')
			up = false
		default:
			b.WriteRune(c)
		}
	}
	return b.String()
}

// Render returns the scaffold's files, by slash-separated path.
func Render(o Options) (map[string][]byte, error) {
	if err := ValidateName(o.Name); err != nil {
		return nil, err
	}
	if !validLang(o.Lang) {
		return nil, fmt.Errorf("unknown language %q; want one of %s", o.Lang, strings.Join(Langs, ", "))
	}
	v := strings.TrimPrefix(o.Version, "v")
	if !regexp.MustCompile(`^\d+\.\d+\.\d+$`).MatchString(v) {
		return nil, fmt.Errorf("version %q is not a release (X.Y.Z)", o.Version)
	}
	d := data{Name: o.Name, Camel: camel(o.Name), Version: v, Module: "example.com/" + o.Name, Lang: o.Lang}
	out := map[string][]byte{}
	for _, root := range []string{"templates/common", "templates/" + o.Lang} {
		err := fs.WalkDir(templates, root, func(p string, e fs.DirEntry, err error) error {
			if err != nil || e.IsDir() {
				return err
			}
			src, err := templates.ReadFile(p)
			if err != nil {
				return err
			}
			t, err := template.New(p).Option("missingkey=error").Parse(string(src))
			if err != nil {
				return err
			}
			var buf bytes.Buffer
			if err := t.Execute(&buf, d); err != nil {
				return err
			}
			rel := strings.TrimSuffix(strings.TrimPrefix(p, root+"/"), ".tmpl")
			rel = strings.ReplaceAll(rel, "NAME", o.Name)
			if path.Base(rel) == "gitignore" { // a dotfile would be a hidden template
				rel = path.Join(path.Dir(rel), ".gitignore")
			}
			out[rel] = buf.Bytes()
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("template %s: %w", root, err)
		}
	}
	return out, nil
}

func validLang(l string) bool {
	for _, x := range Langs {
		if x == l {
			return true
		}
	}
	return false
}

// ErrNotEmpty is returned by Write for a directory holding files.
var ErrNotEmpty = errors.New("directory is not empty")

// Write creates dir (and parents) and writes files into it. A dir that
// exists and holds anything is refused unless force, which overwrites the
// scaffold's files and leaves others alone.
func Write(dir string, files map[string][]byte, force bool) error {
	entries, err := os.ReadDir(dir)
	switch {
	case err == nil && len(entries) > 0 && !force:
		return fmt.Errorf("%s: %w (it holds %s); pick a new directory or pass --force to overwrite the scaffold's files", dir, ErrNotEmpty, entries[0].Name())
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return err
	}
	names := make([]string, 0, len(files))
	for p := range files {
		names = append(names, p)
	}
	sort.Strings(names)
	for _, p := range names {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return err
		}
		mode := os.FileMode(0o644)
		if path.Ext(p) == ".sh" {
			mode = 0o755
		}
		if err := os.WriteFile(full, files[p], mode); err != nil {
			return err
		}
	}
	return nil
}
