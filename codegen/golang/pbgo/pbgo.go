// Package pbgo runs protoc-gen-go's generator as a library on descriptors
// compiled by protocompile, so that `msgcontract generate --with-pb`
// writes the .pb.go files next to ours with no protoc binary on the
// machine, byte for byte what protoc --go_out would write.
//
// Risk: protoc-gen-go exposes its generator only as the package
// google.golang.org/protobuf/cmd/protoc-gen-go/internal_gengo. Go's
// internal-package rule does not apply to its name (it is "internal_gengo",
// not ".../internal/..."), but its authors promise no compatibility for
// it: a google.golang.org/protobuf upgrade can change GenerateFile's
// signature or the Supported* variables and break this package's build.
// TestCommittedProtoGoIsFresh and the --with-pb golden tests catch a
// changed output; a changed API shows as a compile error here, the one
// place that imports it.
package pbgo

import (
	"fmt"
	"strings"

	gengo "google.golang.org/protobuf/cmd/protoc-gen-go/internal_gengo"
	"google.golang.org/protobuf/compiler/protogen"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/pluginpb"

	"github.com/msgcontract/msgcontract/codegen/emit"
)

// Parameter is protoc-gen-go's parameter for p's paths= and module=.
func Parameter(p emit.Params) string {
	var params []string
	if p.Paths != "" {
		params = append(params, "paths="+p.Paths)
	}
	if p.Module != "" {
		params = append(params, "module="+p.Module)
	}
	return strings.Join(params, ",")
}

// Request builds the CodeGeneratorRequest protoc would send a plugin for
// generating files with parameter: every transitive dependency comes
// first, in import order. It is the one place such a request is built,
// for protoc-gen-go here, for protogen's view of the files in
// codegen/golang, and for protoc-gen-msgcontract in its tests.
func Request(parameter string, files ...protoreflect.FileDescriptor) *pluginpb.CodeGeneratorRequest {
	req := &pluginpb.CodeGeneratorRequest{}
	if parameter != "" {
		req.Parameter = &parameter
	}
	for _, fd := range WithImports(files...) {
		req.ProtoFile = append(req.ProtoFile, protodesc.ToFileDescriptorProto(fd))
	}
	for _, fd := range files {
		req.FileToGenerate = append(req.FileToGenerate, fd.Path())
	}
	return req
}

// WithImports returns files and every file they import, transitively,
// each once and after the files it imports: the order protoc lists them
// in a request.
func WithImports(files ...protoreflect.FileDescriptor) []protoreflect.FileDescriptor {
	var out []protoreflect.FileDescriptor
	seen := map[string]bool{}
	var add func(fd protoreflect.FileDescriptor)
	add = func(fd protoreflect.FileDescriptor) {
		if seen[fd.Path()] {
			return
		}
		seen[fd.Path()] = true
		imports := fd.Imports()
		for i := 0; i < imports.Len(); i++ {
			add(imports.Get(i).FileDescriptor)
		}
		out = append(out, fd)
	}
	for _, fd := range files {
		add(fd)
	}
	return out
}

// Generate runs protoc-gen-go on files with p's paths= and module= and
// returns the .pb.go files it produced.
func Generate(p emit.Params, files ...protoreflect.FileDescriptor) ([]emit.File, error) {
	var out []emit.File
	err := Each(p, func(f emit.File) error {
		out = append(out, f)
		return nil
	}, files...)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Each is Generate handing the files to fn one by one, in protoc-gen-go's
// order, and letting go of each once fn returns; it stops at fn's first
// error. Nothing is handed over when protoc-gen-go fails.
func Each(p emit.Params, fn func(emit.File) error, files ...protoreflect.FileDescriptor) error {
	plugin, err := protogen.Options{}.New(Request(Parameter(p), files...))
	if err != nil {
		return fmt.Errorf("protoc-gen-go: %w", err)
	}
	plugin.SupportedFeatures = gengo.SupportedFeatures
	plugin.SupportedEditionsMinimum = gengo.SupportedEditionsMinimum
	plugin.SupportedEditionsMaximum = gengo.SupportedEditionsMaximum
	for _, f := range plugin.Files {
		if f.Generate {
			gengo.GenerateFile(plugin, f)
		}
	}
	resp := plugin.Response()
	if resp.Error != nil {
		return fmt.Errorf("protoc-gen-go: %s", resp.GetError())
	}
	for i, f := range resp.File {
		resp.File[i] = nil
		if err := fn(emit.File{Name: f.GetName(), Content: []byte(f.GetContent())}); err != nil {
			return err
		}
	}
	return nil
}

// Ensure descriptorpb stays linked: protogen needs descriptor.proto's Go
// types registered when a request imports it.
var _ = descriptorpb.File_google_protobuf_descriptor_proto
