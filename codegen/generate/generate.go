// Package generate dispatches a generation run to the language emitters.
// `msgcontract generate` and protoc-gen-msgcontract both call Run, so they
// produce byte-for-byte the same files.
package generate

import (
	"fmt"
	"sort"

	"github.com/msgcontract/msgcontract/codegen/emit"
	"github.com/msgcontract/msgcontract/codegen/golang"
	"github.com/msgcontract/msgcontract/codegen/golang/pbgo"
	"github.com/msgcontract/msgcontract/codegen/java"
	"github.com/msgcontract/msgcontract/codegen/model"
	"github.com/msgcontract/msgcontract/codegen/python"
)

// Langs are the supported languages.
var Langs = []string{"go", "java", "python"}

// Check returns what the emitters cannot represent, positioned like every
// lint diagnostic: Go identifiers that collide with protoc-gen-go's or
// with each other, files whose protoc Java outer class would be no
// identifier, and names protoc's Python stubs cannot hold. Java and Python mangle their own names instead (DESIGN.md,
// "Name mangling"). Lint and the protoc plugin add these to the
// model's diagnostics, so a contract lint accepts generates in every
// language.
func Check(set *model.Set) model.Diagnostics {
	ds := append(golang.Check(set), java.Check(set)...)
	return append(ds, python.Check(set)...)
}

// Lint adds Check's diagnostics to set's, keeping them sorted.
func Lint(set *model.Set) {
	set.Diagnostics = append(set.Diagnostics, Check(set)...)
	set.Diagnostics.Sort()
}

// Run generates code for every file of set in p.Lang, and with p.WithPB
// (Go only) protoc-gen-go's .pb.go files too. The contracts must be free
// of lint errors. Files are returned sorted by name, each checked with
// emit.SafeName.
func Run(set *model.Set, p emit.Params) ([]emit.File, error) {
	if len(set.Diagnostics) > 0 {
		return nil, fmt.Errorf("contracts have %d lint error(s); run msgcontract lint:\n%w", len(set.Diagnostics), set.Diagnostics)
	}
	if p.WithPB && p.Lang != "go" {
		return nil, fmt.Errorf("--with-pb writes Go protobuf code; use it with --lang go, not %q", p.Lang)
	}
	var (
		files []emit.File
		err   error
	)
	switch p.Lang {
	case "go":
		files, err = golang.Generate(set, p)
	case "java":
		files, err = java.Generate(set, p)
	case "python":
		files, err = python.Generate(set, p)
	default:
		return nil, fmt.Errorf("unknown language %q; choose one of %v", p.Lang, Langs)
	}
	if err != nil {
		return nil, err
	}
	if p.WithPB {
		pb, err := pbgo.Generate(p, set.Descriptors()...)
		if err != nil {
			return nil, err
		}
		files = append(files, pb...)
	}
	for _, f := range files {
		if err := emit.SafeName(f.Name); err != nil {
			return nil, err
		}
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Name < files[j].Name })
	return files, nil
}
