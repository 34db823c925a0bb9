// Package generate dispatches a generation run to the language emitters.
// `msgcontract generate` and protoc-gen-msgcontract both call Run, so they
// produce byte-for-byte the same files.
package generate

import (
	"fmt"

	"google.golang.org/protobuf/compiler/protogen"

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

// ShareGoView prepares, for a --with-pb run (p.WithPB, Go), the one
// protogen view of set's files that protoc-gen-go, the Go emitter and
// lint's Go checks then share, instead of each building its own: call it
// before Lint (Each calls it too). Without p.WithPB it does nothing; when
// the view cannot be built nothing is shared, and Lint and Each report
// what they report without it.
func ShareGoView(set *model.Set, p emit.Params) {
	if !p.WithPB || p.Lang != "go" {
		return
	}
	if plugin, err := pbPlugin(set, p); err == nil {
		golang.UsePlugin(set, p, plugin)
	}
}

// pbPlugin is protoc-gen-go's view of set's files for p, built once per
// set and parameter. protoc-gen-go writes every file, so every file
// needs a Go import path: one without is a *golang.ImportPathError.
func pbPlugin(set *model.Set, p emit.Params) (*protogen.Plugin, error) {
	v, err := set.Memo(pbKey{pbgo.Parameter(p)}, func() (any, error) {
		plugin, err := pbgo.New(p, set.Descriptors()...)
		if err != nil {
			if missing := golang.MissingImportPath(p, set.Descriptors()...); missing != nil {
				return nil, missing
			}
			return nil, err
		}
		return plugin, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*protogen.Plugin), nil
}

type pbKey struct{ parameter string }

// Run generates code for every file of set in p.Lang, and with p.WithPB
// (Go only) protoc-gen-go's .pb.go files too. The contracts must be free
// of lint errors. Files are returned sorted by name, each checked with
// emit.SafeName.
func Run(set *model.Set, p emit.Params) ([]emit.File, error) {
	return emit.Collect(func(fn func(emit.File) error) error { return Each(set, p, fn) })
}

// Each is Run handing every file to fn as soon as it is ready, in no fixed
// order, so that the CLI writes files out while others render and holds
// few in memory. fn may be called from several goroutines at once (one
// per core rendering Go, one per core formatting protoc-gen-go's files);
// each file's name has passed emit.SafeName. With p.WithPB, protoc-gen-go
// writes its files on one core while the Go emitter renders on the
// others, then formats them on every core (pbgo.EachOf).
// After an error no more files are handed over, but files already handed
// over stay so.
func Each(set *model.Set, p emit.Params, fn func(emit.File) error) error {
	if len(set.Diagnostics) > 0 {
		errs := "errors"
		if len(set.Diagnostics) == 1 {
			errs = "error"
		}
		return fmt.Errorf("contracts have %d lint %s (msgcontract lint on the same files points inside option values):\n%w", len(set.Diagnostics), errs, set.Diagnostics)
	}
	if p.WithPB && p.Lang != "go" {
		return fmt.Errorf("--with-pb writes Go protobuf code; use it with --lang go, not %q", p.Lang)
	}
	safe := func(f emit.File) error {
		if err := emit.SafeName(f.Name); err != nil {
			return err
		}
		return fn(f)
	}
	all := func(files []emit.File, err error) error {
		if err != nil {
			return err
		}
		for _, f := range files {
			if err := emit.SafeName(f.Name); err != nil {
				return err // before the first file is handed over
			}
		}
		for _, f := range files {
			if err := safe(f); err != nil {
				return err
			}
		}
		return nil
	}
	switch p.Lang {
	case "go":
		if !p.WithPB {
			return golang.Each(set, p, safe)
		}
		ShareGoView(set, p)
		// The Go emitter's names are checked before any file is handed
		// over, so a bad go_package or module= writes nothing.
		r, err := golang.Prepare(set, p)
		if err != nil {
			return err
		}
		plugin, err := pbPlugin(set, p)
		if err != nil {
			return err
		}
		pb := make(chan error, 1)
		go func() { pb <- pbgo.EachOf(plugin, safe) }()
		err = r.Each(safe)
		if pbErr := <-pb; err == nil {
			err = pbErr
		}
		return err
	case "java":
		return all(java.Generate(set, p))
	case "python":
		return all(python.Generate(set, p))
	default:
		return fmt.Errorf("unknown language %q; choose one of %v", p.Lang, Langs)
	}
}
