// Package golang emits Go code from the contract model: for every contract
// file with events or state machines, one file <name>.msgcontract.go beside
// protoc-gen-go's <name>.pb.go, in the same Go package. The code is written
// in gofmt's canonical form directly (writer.go), with no format pass, and
// calls runtime-go for everything with behaviour (key rendering,
// envelopes, classification, backoff, consuming), so generated code stays
// data plus thin typed wrappers.
//
// Go names (message, field, enum and value identifiers, import paths and
// output file names) are computed by protogen, exactly as protoc-gen-go
// computes them, including go_package, M mappings, paths= and module=.
package golang

import (
	"fmt"
	"strings"

	"google.golang.org/protobuf/compiler/protogen"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/msgcontract/msgcontract/codegen/emit"
	"github.com/msgcontract/msgcontract/codegen/golang/pbgo"
	"github.com/msgcontract/msgcontract/codegen/model"
)

// Suffix ends the name of every generated Go file.
const Suffix = ".msgcontract.go"

// Generate renders one Go file for every file of set that declares events
// or state machines; a file with neither generates nothing. Output names
// follow protoc-gen-go: the go_package import path (or the .proto's
// directory with p.Paths "source_relative"), minus p.Module. Files are
// returned sorted by name.
func Generate(set *model.Set, p emit.Params) ([]emit.File, error) {
	return emit.Collect(func(fn func(emit.File) error) error { return Each(set, p, fn) })
}

// Each is Generate handing every file to fn as soon as it is rendered, in
// no fixed order, so that a caller can write it out and forget it.
func Each(set *model.Set, p emit.Params, fn func(emit.File) error) error {
	r, err := Prepare(set, p)
	if err != nil {
		return err
	}
	return r.Each(fn)
}

// Prepared is a run whose output names and Go name collisions are
// checked, with nothing rendered yet.
type Prepared struct {
	gens   []*fileGen
	names  []string
	bodies bodyPool
}

// Prepare checks what Generate would write: Go packages, name collisions
// and output paths (each written for one file only), rendering nothing.
func Prepare(set *model.Set, p emit.Params) (*Prepared, error) {
	plugin, err := Plugin(set, p)
	if err != nil {
		return nil, err
	}
	if ds := check(set, plugin); len(ds) > 0 {
		return nil, ds
	}
	r := &Prepared{}
	var outputs emit.Outputs
	for _, mf := range set.Files {
		if !mf.HasContract() {
			continue
		}
		gf := plugin.FilesByPath[mf.Path]
		if gf == nil {
			return nil, fmt.Errorf("%s: not in the generator's request", mf.Path)
		}
		name, err := outputName(gf, p)
		if err != nil {
			return nil, err
		}
		// Files of one Go package directory with one base name
		// (a/x.proto, b/x.proto) would share one output.
		if err := outputs.Claim(name, mf.Path, goOutputFix); err != nil {
			return nil, err
		}
		r.gens = append(r.gens, &fileGen{model: mf, gofile: gf, plugin: plugin, params: p, bodies: &r.bodies})
		r.names = append(r.names, name)
	}
	if p.WithPB {
		// protoc-gen-go writes a .pb.go beside, for every file.
		for _, mf := range set.Files {
			gf := plugin.FilesByPath[mf.Path]
			if gf == nil {
				continue
			}
			name, err := outputName(gf, p)
			if err != nil {
				continue // protoc-gen-go says why
			}
			if err := outputs.Claim(strings.TrimSuffix(name, Suffix)+".pb.go", mf.Path, goOutputFix); err != nil {
				return nil, err
			}
		}
	}
	return r, nil
}

// goOutputFix is how to tell apart files that would share an output.
const goOutputFix = "give them Go packages of their own (go_package) or rename one of the files"

// Each renders the files on every core, a bounded number at a time, and
// hands each to fn once rendered, from the rendering goroutine: fn may
// run on several at once (files are written in parallel too). After an
// error (of rendering or of fn) no more files are rendered.
func (r *Prepared) Each(fn func(emit.File) error) error {
	gens, names := r.gens, r.names
	// Files render independently, so they render (and are written) in
	// parallel, a bounded number at a time.
	return emit.Parallel(len(gens), func(i int) error {
		content, err := gens[i].render()
		if err != nil {
			return fmt.Errorf("%s: %w", gens[i].model.Path, err)
		}
		return fn(emit.File{Name: names[i], Content: content})
	})
}

// Plugin builds the protogen view of set's files, as protoc-gen-go would
// see them when invoked with p's paths=, module= and M parameters, files
// without Go output or Go import path left out (goFiles). Executors
// and tests use it to find the Go identifiers of messages and enums. It
// is built once per set and parameter (lint's Check and Generate share
// it); callers must not change it. A file the view needs without a Go
// import path is an *ImportPathError.
func Plugin(set *model.Set, p emit.Params) (*protogen.Plugin, error) {
	param := pbgo.Parameter(p)
	v, err := set.Memo(pluginKey{param}, func() (any, error) {
		files := goFiles(set, p)
		req := pbgo.Request(param, files...)
		// Source info is most of a request's size and is only read for
		// comments, which leadingComments takes from the model's
		// descriptors.
		for _, f := range req.ProtoFile {
			f.SourceCodeInfo = nil
		}
		plugin, err := protogen.Options{}.New(req)
		if err != nil {
			if missing := MissingImportPath(p, files...); missing != nil {
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

// pluginKey is the set's memo key of Plugin's result for a protoc-gen-go
// parameter.
type pluginKey struct{ parameter string }

// UsePlugin makes plugin, which protoc-gen-msgcontract built from protoc's
// request with its M mappings, paths= and module=, set's Go view for p and
// for lint's Check, instead of Plugin building another from the same
// files. Call it before either.
func UsePlugin(set *model.Set, p emit.Params, plugin *protogen.Plugin) {
	for _, param := range []string{"", pbgo.Parameter(p)} {
		_, _ = set.Memo(pluginKey{param}, func() (any, error) { return plugin, nil })
	}
}

// leadingComments is the leading comment of d in its .proto source, as
// protogen would report it, or "" when the descriptors carry no source
// info: from view, protogen's comments of d, when the view was built
// with source info (protoc-gen-go's view in generate --with-pb, which
// lets go of the descriptors' own copy), else from d's locations.
func leadingComments(d protoreflect.Descriptor, view protogen.CommentSet) protogen.Comments {
	if view.Leading != "" {
		return view.Leading
	}
	return protogen.Comments(d.ParentFile().SourceLocations().ByDescriptor(d).LeadingComments)
}

// outputName is protoc-gen-go's file placement with our suffix; module= is
// stripped here as protogen strips it from its own responses.
func outputName(f *protogen.File, p emit.Params) (string, error) {
	name := f.GeneratedFilenamePrefix + Suffix
	if p.Module != "" {
		trim := p.Module + "/"
		if !strings.HasPrefix(name, trim) {
			return "", fmt.Errorf("%s: generated file %s does not match module prefix %q; fix go_package or module=",
				f.Desc.Path(), name, p.Module)
		}
		name = strings.TrimPrefix(name, trim)
	}
	if err := emit.SafeName(name); err != nil {
		return "", fmt.Errorf("%s: go_package %q: %w", f.Desc.Path(), f.GoImportPath, err)
	}
	return name, nil
}

// render writes the file, canonical as gofmt would print it.
func (g *fileGen) render() ([]byte, error) {
	w := newWriter(string(g.gofile.GoImportPath), g.bodies.get())
	defer func() { g.bodies.put(w.body) }()
	g.header(w)
	for _, sm := range g.model.StateMachines {
		if err := g.stateMachine(w, sm); err != nil {
			return nil, err
		}
	}
	for _, ev := range g.model.Events {
		if err := g.event(w, ev); err != nil {
			return nil, err
		}
	}
	return w.bytes(g.headerComments(), string(g.gofile.GoPackageName)), nil
}
