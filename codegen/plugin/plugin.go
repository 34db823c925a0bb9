// Package plugin is protoc-gen-msgcontract: it reads protoc's
// CodeGeneratorRequest, builds the contract model from the descriptors
// protoc sends and calls the same generate.Run as `msgcontract generate`,
// so both write byte-for-byte the same files.
//
// Parameters ("--msgcontract_out=lang=go,paths=source_relative:DIR") are
// bound to a flag.FlagSet: lang (go, java or python; default go), paths
// (import or source_relative), module (a Go import-path prefix to strip)
// and protoc-gen-go's M<file>=<import path> mappings. An unknown key is an
// error.
//
// lang may name several languages joined by "+" (lang=go+java+python): one
// invocation then decodes, builds and lints the request once and writes
// each language's files under a folder of DIR, named after the language
// unless go_dir=, java_dir= or python_dir= say otherwise, as protoc's own
// --go_out=DIR/go --java_out=DIR/java --python_out=DIR/python lay them
// out; paths= and module= then apply to Go only, as they do to
// protoc-gen-go.
package plugin

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"strings"

	"google.golang.org/protobuf/compiler/protogen"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/pluginpb"

	"github.com/msgcontract/msgcontract/codegen/emit"
	"github.com/msgcontract/msgcontract/codegen/generate"
	"github.com/msgcontract/msgcontract/codegen/golang"
	"github.com/msgcontract/msgcontract/codegen/model"
)

// Editions the plugin accepts: those protoc-gen-go and protocompile both
// support.
const (
	editionMin = descriptorpb.Edition_EDITION_PROTO2
	editionMax = descriptorpb.Edition_EDITION_2024
)

// Run reads a CodeGeneratorRequest from in and writes the response to out.
// Generation failures travel in the response, as protoc expects; an error
// is returned only when in or out fail.
func Run(in io.Reader, out io.Writer, version string) error {
	raw, err := io.ReadAll(in)
	if err != nil {
		return err
	}
	return Answer(raw, version, out)
}

// Answer is Run on an encoded request: it writes to out the bytes
// proto.Marshal gives for Generate's response, each generated file's
// content straight from the generator's buffer, neither copied into a
// string nor into one buffer holding the whole response (which is
// megabytes for a few hundred files, and memory a short-lived plugin
// process pays for in page faults). An error is returned only when out
// fails.
func Answer(raw []byte, version string, out io.Writer) error {
	w := bufio.NewWriterSize(out, 64<<10)
	req := &pluginpb.CodeGeneratorRequest{}
	if err := proto.Unmarshal(narrowRaw(raw), req); err != nil {
		return fmt.Errorf("reading the CodeGeneratorRequest: %w", err)
	}
	resp := response()
	files, err := generateFiles(req, version)
	if err != nil {
		resp.Error = proto.String(err.Error())
	}
	head, err := proto.Marshal(resp)
	if err != nil {
		return err
	}
	if _, err := w.Write(head); err != nil {
		return err
	}
	// response_file fields come last in field-number order, as Marshal
	// writes them.
	var b []byte
	for _, f := range files {
		n := protowire.SizeTag(respFileName) + protowire.SizeBytes(len(f.Name)) +
			protowire.SizeTag(respFileContent) + protowire.SizeBytes(len(f.Content))
		b = protowire.AppendTag(b[:0], respFile, protowire.BytesType)
		b = protowire.AppendVarint(b, uint64(n))
		b = protowire.AppendTag(b, respFileName, protowire.BytesType)
		b = protowire.AppendString(b, f.Name)
		b = protowire.AppendTag(b, respFileContent, protowire.BytesType)
		b = protowire.AppendVarint(b, uint64(len(f.Content)))
		if _, err := w.Write(b); err != nil {
			return err
		}
		if _, err := w.Write(f.Content); err != nil {
			return err
		}
	}
	return w.Flush()
}

// Field numbers of CodeGeneratorResponse and its File that Answer writes.
const (
	respFile        = 15
	respFileName    = 1
	respFileContent = 15
)

// response is a response without files: the features and editions the
// plugin supports.
func response() *pluginpb.CodeGeneratorResponse {
	return &pluginpb.CodeGeneratorResponse{
		SupportedFeatures: proto.Uint64(uint64(pluginpb.CodeGeneratorResponse_FEATURE_PROTO3_OPTIONAL |
			pluginpb.CodeGeneratorResponse_FEATURE_SUPPORTS_EDITIONS)),
		MinimumEdition: proto.Int32(int32(editionMin)),
		MaximumEdition: proto.Int32(int32(editionMax)),
	}
}

// Generate answers one request.
func Generate(req *pluginpb.CodeGeneratorRequest, version string) *pluginpb.CodeGeneratorResponse {
	resp := response()
	files, err := generateFiles(req, version)
	if err != nil {
		resp.Error = proto.String(err.Error())
		return resp
	}
	for _, f := range files {
		resp.File = append(resp.File, &pluginpb.CodeGeneratorResponse_File{
			Name:    proto.String(f.Name),
			Content: proto.String(string(f.Content)),
		})
	}
	return resp
}

func generateFiles(req *pluginpb.CodeGeneratorRequest, version string) ([]emit.File, error) {
	var (
		flags  flag.FlagSet
		params = emit.Params{Version: version}
	)
	flags.StringVar(&params.Lang, "lang", "go", "language to generate: "+strings.Join(generate.Langs, ", ")+", or several joined by +")
	flags.StringVar(&params.Paths, "paths", "", "import or source_relative")
	flags.StringVar(&params.Module, "module", "", "Go import-path prefix to strip from output paths")
	dirFlags := map[string]*string{}
	for _, l := range generate.Langs {
		dirFlags[l] = flags.String(l+"_dir", l, "folder of "+l+"'s files when lang names several languages")
	}
	for _, kv := range strings.Split(req.GetParameter(), ",") {
		k, v, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(k, "M"):
			// protoc-gen-go's, read by protogen below; kept to tell
			// which files have a Go import path (dropUnplaced).
			if params.GoImportPaths == nil {
				params.GoImportPaths = map[string]string{}
			}
			params.GoImportPaths[k[1:]] = v
			continue
		case kv == "", k == "annotate_code":
			continue // protoc-gen-go's own parameter, read by protogen below
		}
		if err := flags.Set(k, v); err != nil {
			return nil, fmt.Errorf("protoc-gen-msgcontract: parameter %q: %w; parameters are lang=go|java|python (or several joined by +), paths=import|source_relative, module=PREFIX, go_dir=, java_dir=, python_dir= and M<file>=<go import path>", kv, err)
		}
	}
	dirs := map[string]string{}
	for l, d := range dirFlags {
		dirs[l] = *d
	}
	targets, err := generate.Targets(params.Lang, dirs, "lang=")
	if err != nil {
		return nil, err
	}
	req = contractsOnly(req)
	if len(req.GetFileToGenerate()) == 0 {
		// Parameters are still checked: a mistake shows before the first
		// contract arrives.
		if params.Paths != "" && params.Paths != "import" && params.Paths != "source_relative" {
			return nil, fmt.Errorf("protoc-gen-msgcontract: unknown path type %q: want \"import\" or \"source_relative\"", params.Paths)
		}
		return nil, nil
	}
	// protogen resolves Go packages (go_package, M mappings) exactly as
	// protoc-gen-go does, and validates paths= and module=. Its view of
	// protoc's request is built once, and serves every language: its
	// descriptors are the model's, lint's Go checks read its Go names and
	// the Go emitter writes from it. Only Go generation fails when it
	// cannot be built.
	view := generate.ViewParams(params, targets)
	var set *model.Set
	if view.Lang == "go" {
		if req, set, err = dropUnplaced(req, view); err != nil {
			return nil, err
		}
	}
	gen, err := goView(req, view.Lang)
	if err != nil {
		return nil, fmt.Errorf("protoc-gen-msgcontract: %w", err)
	}
	if set == nil {
		var fds []protoreflect.FileDescriptor
		if gen != nil {
			for _, name := range req.GetFileToGenerate() {
				fds = append(fds, gen.FilesByPath[name].Desc)
			}
		} else if fds, err = descriptors(req); err != nil {
			return nil, err
		}
		if set, err = model.FromFiles(fds...); err != nil {
			return nil, err
		}
	}
	if gen != nil {
		golang.UsePlugin(set, goParams(view), gen)
	}
	generate.Lint(set)
	return generate.RunTargets(set, params, targets)
}

// dropUnplaced leaves out of the files protogen generates Go for those
// with no Go output (no events, no state machines) and no Go import path
// (no go_package, no M mapping): protogen would refuse the request for
// them, and there is nothing to place. The CLI's Go view leaves out the
// same files (golang.Plugin). When a file is left out, the model is built
// here, of every file to generate, so that lint sees all of them as the
// CLI's does; else it is nil, to be built from protogen's view.
func dropUnplaced(req *pluginpb.CodeGeneratorRequest, p emit.Params) (*pluginpb.CodeGeneratorRequest, *model.Set, error) {
	byName := make(map[string]*descriptorpb.FileDescriptorProto, len(req.GetProtoFile()))
	for _, f := range req.GetProtoFile() {
		byName[f.GetName()] = f
	}
	unplaced := false
	for _, name := range req.GetFileToGenerate() {
		if golang.ImportPath(p, name, byName[name].GetOptions().GetGoPackage()) == "" {
			unplaced = true
			break
		}
	}
	if !unplaced {
		return req, nil, nil
	}
	fds, err := descriptors(req)
	if err != nil {
		return nil, nil, err
	}
	set, err := model.FromFiles(fds...)
	if err != nil {
		return nil, nil, err
	}
	narrowed := &pluginpb.CodeGeneratorRequest{
		Parameter:             req.Parameter,
		ProtoFile:             req.ProtoFile,
		SourceFileDescriptors: req.SourceFileDescriptors,
		CompilerVersion:       req.CompilerVersion,
	}
	for _, f := range set.Files {
		if f.HasContract() || golang.ImportPath(p, f.Path, byName[f.Path].GetOptions().GetGoPackage()) != "" {
			narrowed.FileToGenerate = append(narrowed.FileToGenerate, f.Path)
		}
	}
	if len(narrowed.FileToGenerate) == 0 {
		// protogen takes a request naming no file to generate as naming
		// every file it carries.
		narrowed.ProtoFile, narrowed.SourceFileDescriptors = nil, nil
	}
	return narrowed, set, nil
}

// goView is protogen's view of req. For Go it reads req's parameters (M
// mappings, paths=, module=) and its error is the plugin's. For Java and
// Python it is lint's Go view, which `msgcontract lint` builds without
// parameters: it is built so, and when it cannot be (a file without
// go_package), there is no Go view and no error: lint's Go checks have
// nothing to check, as in golang.Check.
func goView(req *pluginpb.CodeGeneratorRequest, lang string) (*protogen.Plugin, error) {
	opts := protogen.Options{ParamFunc: func(string, string) error { return nil }}
	if lang == "go" {
		return opts.New(req)
	}
	param := req.Parameter
	req.Parameter = nil
	gen, err := opts.New(req)
	req.Parameter = param
	if err != nil {
		return nil, nil
	}
	return gen, nil
}

// goParams are the parameters gen was built with for p: lint's (none)
// unless Go is generated.
func goParams(p emit.Params) emit.Params {
	if p.Lang == "go" {
		return p
	}
	return emit.Params{}
}

// descriptors builds the files to generate and their imports.
func descriptors(req *pluginpb.CodeGeneratorRequest) ([]protoreflect.FileDescriptor, error) {
	files, err := protodesc.NewFiles(&descriptorpb.FileDescriptorSet{File: req.GetProtoFile()})
	if err != nil {
		return nil, err
	}
	var out []protoreflect.FileDescriptor
	for _, name := range req.GetFileToGenerate() {
		fd, err := files.FindFileByPath(name)
		if err != nil {
			return nil, err
		}
		out = append(out, fd)
	}
	return out, nil
}
