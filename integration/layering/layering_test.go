package layering_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/msgcontract/msgcontract/"

// layer returns the layer of a package path relative to the module root
// (see doc.go), or 0 for a package outside the module.
func layer(rel string) int {
	top, _, _ := strings.Cut(rel, "/")
	switch top {
	case ".", "":
		// the module's root package: the family's VERSION, nothing more
		return 1
	case "contracts", "runtime-go", "templates":
		return 1
	case "codegen":
		return 2
	case "registry":
		return 3
	case "conformance", "internal":
		return 4
	case "cmd", "examples", "bench", "ops", "integration":
		return 5
	}
	return -1
}

// TestNoUpwardImports reads the imports of every non-test Go file of the
// tool module and fails on each one that reaches a higher layer. (The
// files are parsed here rather than listed by `go list`, so that go
// test's cache notices when one changes.)
func TestNoUpwardImports(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..")
	checked := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			// runtime-go's are modules of their own and cannot import this
			// one; third_party holds upstream copies, which import none of
			// msgcontract's packages but their own.
			if rel == "runtime-go" || rel == "third_party" || d.Name() == "testdata" || (strings.HasPrefix(d.Name(), ".") && rel != ".") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		pkg := filepath.ToSlash(filepath.Dir(rel))
		from := layer(pkg)
		if from < 0 {
			t.Errorf("%s is in no layer; add its folder to layer() and doc.go", pkg)
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, spec := range f.Imports {
			imp, _ := strconv.Unquote(spec.Path.Value)
			to, ok := strings.CutPrefix(imp+"/", module)
			if !ok {
				continue
			}
			to = strings.TrimSuffix(to, "/")
			checked++
			switch {
			case layer(to) > from:
				t.Errorf("%s (layer %d) imports %s (layer %d): move the shared code down, or the importer up", rel, from, to, layer(to))
			case strings.HasPrefix(to, "internal/") && from < 4:
				t.Errorf("%s imports %s: codegen and registry must not depend on the tool's internals", rel, to)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 50 {
		t.Fatalf("only %d imports of this module checked; is the walk reading the module?", checked)
	}
}
