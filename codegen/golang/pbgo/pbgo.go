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
	"maps"
	"slices"
	"strings"
	"sync"

	gengo "google.golang.org/protobuf/cmd/protoc-gen-go/internal_gengo"
	"google.golang.org/protobuf/compiler/protogen"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/gofeaturespb"
	"google.golang.org/protobuf/types/pluginpb"

	"github.com/msgcontract/msgcontract/codegen/emit"
)

// Parameter is protoc-gen-go's parameter for p's paths=, module= and M
// mappings (sorted by file, so that equal Params give equal parameters).
func Parameter(p emit.Params) string {
	var params []string
	if p.Paths != "" {
		params = append(params, "paths="+p.Paths)
	}
	if p.Module != "" {
		params = append(params, "module="+p.Module)
	}
	for _, file := range slices.Sorted(maps.Keys(p.GoImportPaths)) {
		params = append(params, "M"+file+"="+p.GoImportPaths[file])
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
	plugin, err := New(p, files...)
	if err != nil {
		return nil, err
	}
	var (
		mu  sync.Mutex
		out []emit.File
		at  []int
	)
	err = eachOf(plugin, func(i int, f emit.File) error {
		mu.Lock()
		defer mu.Unlock()
		out, at = append(out, f), append(at, i)
		return nil
	})
	if err != nil {
		return nil, err
	}
	sorted := make([]emit.File, len(out))
	for j, i := range at {
		sorted[i] = out[j]
	}
	return sorted, nil
}

// Each is Generate handing the files to fn as EachOf does.
func Each(p emit.Params, fn func(emit.File) error, files ...protoreflect.FileDescriptor) error {
	plugin, err := New(p, files...)
	if err != nil {
		return err
	}
	return EachOf(plugin, fn)
}

// New builds the protogen view protoc-gen-go works on for files with p's
// paths= and module=. Its descriptors carry the files' comments (for the
// .pb.go's doc comments); the request's copy of the source info, which
// protogen has read and protoc-gen-go drops, is let go. It is a complete
// protogen view of the files, so lint's Go checks and the Go emitter can
// share it (golang.UsePlugin) instead of building another.
func New(p emit.Params, files ...protoreflect.FileDescriptor) (*protogen.Plugin, error) {
	req := &pluginpb.CodeGeneratorRequest{}
	if param := Parameter(p); param != "" {
		req.Parameter = &param
	}
	var own []*descriptorpb.FileDescriptorProto
	for _, fd := range WithImports(files...) {
		// protocompile's files carry the proto they were built from,
		// which protoc would send: no need to copy it (read only here).
		if w, ok := fd.(interface {
			FileDescriptorProto() *descriptorpb.FileDescriptorProto
		}); ok {
			req.ProtoFile = append(req.ProtoFile, w.FileDescriptorProto())
			continue
		}
		fp := protodesc.ToFileDescriptorProto(fd)
		own = append(own, fp)
		req.ProtoFile = append(req.ProtoFile, fp)
	}
	for _, fd := range files {
		req.FileToGenerate = append(req.FileToGenerate, fd.Path())
	}
	plugin, err := protogen.Options{}.New(req)
	if err != nil {
		return nil, fmt.Errorf("protoc-gen-go: %w", err)
	}
	plugin.SupportedFeatures = gengo.SupportedFeatures
	plugin.SupportedEditionsMinimum = gengo.SupportedEditionsMinimum
	plugin.SupportedEditionsMaximum = gengo.SupportedEditionsMaximum
	// protodesc copied every location into the descriptors when protogen
	// built them; protoc-gen-go clones each file's proto only to drop this.
	for _, fp := range own {
		fp.SourceCodeInfo = nil
	}
	return plugin, nil
}

// EachOf runs protoc-gen-go on plugin (from New) and hands each .pb.go
// file to fn once it is formatted, instead of formatting all of them
// first as protogen's Response does: protoc-gen-go writes the files one
// at a time on the calling goroutine (it is not safe for more), a few
// files ahead of the formatting (Go's parser and printer, most of the
// work), which runs on every core, a file at a time per core; fn is
// called from those goroutines, in no fixed order. A file's unformatted
// text is let go once it is formatted, so few are held at once. Files are
// named as Response names them (module= stripped); a name outside
// module= fails before anything is written. After fn's first error, or an
// error protoc-gen-go records (which it does for no valid file: a
// descriptor that does not marshal, or its own output that does not
// parse), no more files are written or formatted; files handed over
// before stay so. Call it once per plugin; it may run while others read
// plugin (it adds nothing to it).
func EachOf(plugin *protogen.Plugin, fn func(emit.File) error) error {
	return eachOf(plugin, func(_ int, f emit.File) error { return fn(f) })
}

// eachOf is EachOf telling fn each file's place in protoc-gen-go's order.
func eachOf(plugin *protogen.Plugin, fn func(int, emit.File) error) error {
	var files []*protogen.File
	for _, f := range plugin.Files {
		if !f.Generate {
			continue
		}
		if f.APILevel == gofeaturespb.GoFeatures_API_HYBRID {
			// protoc-gen-go writes two files for it and returns one.
			return eachOfResponse(plugin, fn)
		}
		files = append(files, f)
	}
	names := make([]string, len(files))
	for i, f := range files {
		// protoc-gen-go's name for the file, trimmed as Response trims it.
		name := f.GeneratedFilenamePrefix + ".pb.go"
		if module := parameter(plugin.Request.GetParameter(), "module"); module != "" {
			trim := module + "/"
			if !strings.HasPrefix(name, trim) {
				return fmt.Errorf("protoc-gen-go: %v: generated file does not match prefix %q", name, module)
			}
			name = strings.TrimPrefix(name, trim)
		}
		names[i] = name
	}
	return emit.Pipeline(len(files), func(i int) (*protogen.GeneratedFile, error) {
		// Each file is written into a shallow copy of plugin, which
		// holds only that file's output (protogen keeps every file a
		// plugin writes until its Response) and the error protoc-gen-go
		// records for it; the view itself is shared and only read.
		// protoc-gen-go is not safe on several goroutines: Pipeline runs
		// this on one, a file or two ahead of the formatting.
		one := *plugin
		g := gengo.GenerateFile(&one, files[i])
		g.Skip()
		if resp := one.Response(); resp.Error != nil {
			return nil, fmt.Errorf("protoc-gen-go: %s", resp.GetError())
		}
		return g, nil
	}, func(i int, g *protogen.GeneratedFile) error {
		content, err := g.Content()
		if err != nil {
			return fmt.Errorf("protoc-gen-go: %w", err)
		}
		return fn(i, emit.File{Name: names[i], Content: content})
	})
}

// eachOfResponse is EachOf through protogen's Response, which formats
// every file before the first is handed over.
func eachOfResponse(plugin *protogen.Plugin, fn func(int, emit.File) error) error {
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
		if err := fn(i, emit.File{Name: f.GetName(), Content: []byte(f.GetContent())}); err != nil {
			return err
		}
	}
	return nil
}

// parameter is the value of key in a plugin parameter "k=v,k2=v2", as
// protogen reads it (the last one wins).
func parameter(param, key string) string {
	var value string
	for _, kv := range strings.Split(param, ",") {
		if k, v, ok := strings.Cut(kv, "="); ok && k == key {
			value = v
		}
	}
	return value
}

// Ensure descriptorpb stays linked: protogen needs descriptor.proto's Go
// types registered when a request imports it.
var _ = descriptorpb.File_google_protobuf_descriptor_proto
