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
	"flag"
	"fmt"
	"io"
	"path"
	"slices"
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
	editionMax = descriptorpb.Edition_EDITION_2023
)

// Run reads a CodeGeneratorRequest from in and writes the response to out.
// Generation failures travel in the response, as protoc expects; an error
// is returned only when in or out fail.
func Run(in io.Reader, out io.Writer, version string) error {
	raw, err := io.ReadAll(in)
	if err != nil {
		return err
	}
	resp, err := Answer(raw, version)
	if err != nil {
		return err
	}
	_, err = out.Write(resp)
	return err
}

// Answer is Run on an encoded request, returning the encoded response: the
// bytes proto.Marshal gives for Generate's response, written without
// copying each generated file into a string and then into the message.
func Answer(raw []byte, version string) ([]byte, error) {
	req := &pluginpb.CodeGeneratorRequest{}
	if err := proto.Unmarshal(narrowRaw(raw), req); err != nil {
		return nil, fmt.Errorf("reading the CodeGeneratorRequest: %w", err)
	}
	resp := response()
	files, err := generateFiles(req, version)
	if err != nil {
		resp.Error = proto.String(err.Error())
		return proto.Marshal(resp)
	}
	size := 0
	for _, f := range files {
		size += len(f.Name) + len(f.Content) + 32 // and tags and lengths
	}
	b, err := proto.MarshalOptions{}.MarshalAppend(make([]byte, 0, size+64), resp)
	if err != nil {
		return nil, err
	}
	// response_file fields come last in field-number order, as Marshal
	// writes them.
	for _, f := range files {
		n := protowire.SizeTag(respFileName) + protowire.SizeBytes(len(f.Name)) +
			protowire.SizeTag(respFileContent) + protowire.SizeBytes(len(f.Content))
		b = protowire.AppendTag(b, respFile, protowire.BytesType)
		b = protowire.AppendVarint(b, uint64(n))
		b = protowire.AppendTag(b, respFileName, protowire.BytesType)
		b = protowire.AppendString(b, f.Name)
		b = protowire.AppendTag(b, respFileContent, protowire.BytesType)
		b = protowire.AppendBytes(b, f.Content)
	}
	return b, nil
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
	dirs := map[string]*string{}
	for _, l := range generate.Langs {
		dirs[l] = flags.String(l+"_dir", l, "folder of "+l+"'s files when lang names several languages")
	}
	for _, kv := range strings.Split(req.GetParameter(), ",") {
		k, v, _ := strings.Cut(kv, "=")
		switch {
		case kv == "", strings.HasPrefix(k, "M"), k == "annotate_code":
			continue // protoc-gen-go's own parameters, read by protogen below
		}
		if err := flags.Set(k, v); err != nil {
			return nil, fmt.Errorf("protoc-gen-msgcontract: parameter %q: %w; parameters are lang=go|java|python (or several joined by +), paths=import|source_relative, module=PREFIX, go_dir=, java_dir=, python_dir= and M<file>=<go import path>", kv, err)
		}
	}
	langs, err := parseLangs(params.Lang, dirs)
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
	params.Lang = langs[0].lang
	if slices.ContainsFunc(langs, func(l outLang) bool { return l.lang == "go" }) {
		params.Lang = "go"
	}
	gen, err := goView(req, params.Lang)
	if err != nil {
		return nil, fmt.Errorf("protoc-gen-msgcontract: %w", err)
	}
	var fds []protoreflect.FileDescriptor
	if gen != nil {
		for _, name := range req.GetFileToGenerate() {
			fds = append(fds, gen.FilesByPath[name].Desc)
		}
	} else if fds, err = descriptors(req); err != nil {
		return nil, err
	}
	set, err := model.FromFiles(fds...)
	if err != nil {
		return nil, err
	}
	if gen != nil {
		golang.UsePlugin(set, goParams(params), gen)
	}
	generate.Lint(set)
	if len(langs) == 1 {
		return generate.Run(set, params)
	}
	var all []emit.File
	for _, l := range langs {
		p := params
		p.Lang = l.lang
		if l.lang != "go" {
			// paths= and module= are protoc-gen-go's: beside Go, Java and
			// Python are laid out as protoc's --java_out and --python_out
			// lay out theirs.
			p.Paths, p.Module = "", ""
		}
		files, err := generate.Run(set, p)
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			f.Name = path.Join(l.dir, f.Name)
			all = append(all, f)
		}
	}
	return all, nil
}

// outLang is a language to generate and, when lang= names several, the
// folder of its files.
type outLang struct{ lang, dir string }

// parseLangs reads lang= ("go", or "go+java+python"): each language once,
// with its folder from dirs when there are several.
func parseLangs(param string, dirs map[string]*string) ([]outLang, error) {
	var out []outLang
	for _, l := range strings.Split(param, "+") {
		if !validLang(l) {
			return nil, fmt.Errorf("unknown language %q in lang=%s; choose one of %v, or several joined by + (lang=go+java+python)", l, param, generate.Langs)
		}
		if slices.ContainsFunc(out, func(o outLang) bool { return o.lang == l }) {
			return nil, fmt.Errorf("lang=%s names %s twice", param, l)
		}
		out = append(out, outLang{lang: l})
	}
	if len(out) == 1 {
		return out, nil
	}
	for i := range out {
		dir := *dirs[out[i].lang]
		if err := emit.SafeName(dir); err != nil || dir == "." || path.Clean(dir) != dir {
			return nil, fmt.Errorf("%s_dir=%q: want a relative folder inside the output directory, such as %s or gen/%s", out[i].lang, dir, out[i].lang, out[i].lang)
		}
		for _, o := range out[:i] {
			if o.dir == dir {
				return nil, fmt.Errorf("%s_dir and %s_dir are both %q: each language needs its own folder", o.lang, out[i].lang, dir)
			}
		}
		out[i].dir = dir
	}
	return out, nil
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

// optionsProto declares msgcontract's options: a file that does not import
// it, directly or through public imports, carries none.
const optionsProto = "msgcontract/v1/options.proto"

// contractsOnly returns req narrowed to the files to generate that can
// carry msgcontract options and the files they import, transitively. The
// others generate nothing, so they cost nothing more: no descriptors, no
// Go package resolution, no model and no lint (most files of a large
// repository are plain protobuf). req itself is returned when nothing is
// left out.
func contractsOnly(req *pluginpb.CodeGeneratorRequest) *pluginpb.CodeGeneratorRequest {
	generate, needed := contractFiles(req.GetFileToGenerate(), req.GetProtoFile())
	if len(generate) == len(req.GetFileToGenerate()) {
		return req
	}
	out := &pluginpb.CodeGeneratorRequest{
		FileToGenerate:  generate,
		Parameter:       req.Parameter,
		CompilerVersion: req.CompilerVersion,
	}
	for _, f := range req.GetProtoFile() {
		if needed[f.GetName()] {
			out.ProtoFile = append(out.ProtoFile, f)
		}
	}
	for _, f := range req.GetSourceFileDescriptors() {
		if needed[f.GetName()] {
			out.SourceFileDescriptors = append(out.SourceFileDescriptors, f)
		}
	}
	return out
}

// contractFiles returns the files of toGenerate that import the options
// (directly or through public imports), and the names of those files and
// of every file they import, transitively. files need only their name,
// dependency and public_dependency fields.
func contractFiles(toGenerate []string, files []*descriptorpb.FileDescriptorProto) (generate []string, needed map[string]bool) {
	byName := make(map[string]*descriptorpb.FileDescriptorProto, len(files))
	for _, f := range files {
		byName[f.GetName()] = f
	}
	// exposes reports whether importing name makes the options visible:
	// it is options.proto or publicly imports a file that exposes them.
	memo := map[string]bool{}
	var exposes func(name string) bool
	exposes = func(name string) bool {
		if name == optionsProto {
			return true
		}
		if v, ok := memo[name]; ok {
			return v
		}
		memo[name] = false // import cycles are protoc's error, not a loop here
		f := byName[name]
		for _, i := range f.GetPublicDependency() {
			if int(i) < len(f.GetDependency()) && exposes(f.GetDependency()[i]) {
				memo[name] = true
				break
			}
		}
		return memo[name]
	}
	for _, name := range toGenerate {
		for _, dep := range byName[name].GetDependency() {
			if exposes(dep) {
				generate = append(generate, name)
				break
			}
		}
	}
	needed = map[string]bool{}
	var need func(name string)
	need = func(name string) {
		if needed[name] {
			return
		}
		needed[name] = true
		for _, dep := range byName[name].GetDependency() {
			need(dep)
		}
	}
	for _, name := range generate {
		need(name)
	}
	return generate, needed
}

// Field numbers of CodeGeneratorRequest and FileDescriptorProto that
// narrowRaw reads.
const (
	reqFileToGenerate        = 1
	reqProtoFile             = 15
	reqSourceFileDescriptors = 17
	fileName                 = 1
	fileDependency           = 3
	filePublicDependency     = 10
)

// narrowRaw is contractsOnly on the encoded request, before it is
// decoded: a plain file's descriptor (most of it source info) is skipped
// as bytes instead of decoded and dropped. Only the name and imports of
// each file are read. The files kept keep only the source info of their
// declarations, and only when they are generated (declarationsOnly).
// source_file_descriptors (protoc 24 and later: the files to generate
// again, with source-retention options and all their source info, as
// large again as those files) are dropped whole: nothing reads them, as
// msgcontract's options are runtime-retention. raw itself is returned
// when it cannot be read (proto.Unmarshal then says why).
func narrowRaw(raw []byte) []byte {
	type field struct {
		num  protowire.Number
		b    []byte // the whole field, tag included
		v    []byte // its value (bytes fields: without the length)
		file string // proto_file: the file's name
	}
	var (
		fields     []field
		toGenerate []string
		files      []*descriptorpb.FileDescriptorProto
	)
	ok := eachField(raw, func(num protowire.Number, typ protowire.Type, whole, value []byte) bool {
		f := field{num: num, b: whole}
		if typ == protowire.BytesType {
			v, _ := protowire.ConsumeBytes(value)
			f.v = v
			switch num {
			case reqFileToGenerate:
				toGenerate = append(toGenerate, string(v))
			case reqProtoFile:
				fd := fileHeader(v)
				if fd == nil {
					return false
				}
				f.file = fd.GetName()
				files = append(files, fd)
			}
		}
		fields = append(fields, f)
		return true
	})
	if !ok {
		return raw
	}
	generate, needed := contractFiles(toGenerate, files)
	keep := map[string]bool{}
	for _, name := range generate {
		keep[name] = true
	}
	out := make([]byte, 0, len(raw))
	var info []byte // scratch for declarationsOnly
	for _, f := range fields {
		switch f.num {
		case reqFileToGenerate:
			if !keep[string(f.v)] {
				continue
			}
		case reqSourceFileDescriptors:
			continue
		case reqProtoFile:
			if !needed[f.file] {
				continue
			}
			var ok bool
			if out, info, ok = declarationsOnly(out, f.v, info[:0], keep[f.file]); ok {
				continue
			}
		}
		out = append(out, f.b...)
	}
	return out
}

// Field numbers of FileDescriptorProto's source info that
// declarationsOnly reads.
const (
	fileSourceCodeInfo = 9
	sourceLocation     = 1
	locationPath       = 1
)

// declarationsOnly appends the encoded FileDescriptorProto file to dst as
// a proto_file field of a request, with the locations of its source info
// narrowed to those of declarations (the file, messages, fields, oneofs,
// enums, enum values, services, methods, extensions), in their order.
// Those are the only ones the plugin reads, through
// SourceLocations().ByDescriptor: positions of lint findings (without an
// AST a finding points at its element) and leading comments. The rest,
// three quarters of the locations (names, types, numbers, options,
// imports...), would be decoded and indexed for nothing. Without generate
// (a file only imported) no location is kept: lint and the generators
// read positions and comments of the files they generate only. info is
// scratch space, returned for reuse. When file or its source info cannot
// be read, dst is returned as it was with false, for the caller to pass
// file on as it is and proto.Unmarshal to judge it.
func declarationsOnly(dst, file, info []byte, generate bool) ([]byte, []byte, bool) {
	var (
		infoField []byte // the whole source_code_info field of file
		infoCount int
	)
	ok := eachField(file, func(num protowire.Number, typ protowire.Type, whole, value []byte) bool {
		if num != fileSourceCodeInfo || typ != protowire.BytesType {
			return true
		}
		infoField, infoCount = whole, infoCount+1
		v, _ := protowire.ConsumeBytes(value)
		return eachField(v, func(num protowire.Number, typ protowire.Type, whole, value []byte) bool {
			if num != sourceLocation || typ != protowire.BytesType {
				info = append(info, whole...)
				return true
			}
			keep, ok := keepLocation(value)
			if keep && generate {
				info = append(info, whole...)
			}
			return ok
		})
	})
	if !ok || infoCount > 1 { // a repeated source_code_info would merge
		return dst, info, false
	}
	size := len(file)
	switch {
	case infoField != nil && !generate:
		size -= len(infoField)
	case infoField != nil:
		size += protowire.SizeTag(fileSourceCodeInfo) + protowire.SizeBytes(len(info)) - len(infoField)
	}
	dst = protowire.AppendTag(dst, reqProtoFile, protowire.BytesType)
	dst = protowire.AppendVarint(dst, uint64(size))
	eachField(file, func(num protowire.Number, typ protowire.Type, whole, _ []byte) bool {
		if num != fileSourceCodeInfo || typ != protowire.BytesType {
			dst = append(dst, whole...)
			return true
		}
		if generate {
			dst = protowire.AppendTag(dst, fileSourceCodeInfo, protowire.BytesType)
			dst = protowire.AppendBytes(dst, info)
		}
		return true
	})
	return dst, info, true
}

// keepLocation reports whether the encoded Location field value (length
// prefix included) is a declaration's, and false for ok when it cannot be
// read.
func keepLocation(value []byte) (keep, ok bool) {
	loc, n := protowire.ConsumeBytes(value)
	if n < 0 {
		return false, false
	}
	var buf [16]int32
	path := buf[:0]
	ok = eachField(loc, func(num protowire.Number, typ protowire.Type, _, v []byte) bool {
		if num != locationPath {
			return true
		}
		switch typ {
		case protowire.VarintType:
			x, _ := protowire.ConsumeVarint(v)
			path = append(path, int32(x))
		case protowire.BytesType:
			packed, _ := protowire.ConsumeBytes(v)
			for len(packed) > 0 {
				x, k := protowire.ConsumeVarint(packed)
				if k < 0 {
					return false
				}
				path = append(path, int32(x))
				packed = packed[k:]
			}
		}
		return true
	})
	return ok && declarationPath(path), ok
}

// Field numbers along the source path of a declaration
// (descriptor.proto).
const (
	pathFileMessage   = 4
	pathFileEnum      = 5
	pathFileService   = 6
	pathFileExtension = 7
	pathMessageField  = 2
	pathMessageNested = 3
	pathMessageEnum   = 4
	pathMessageExt    = 6
	pathMessageOneof  = 8
	pathEnumValue     = 2
	pathServiceMethod = 2
)

// declarationPath reports whether a source path leads to a declaration,
// a descriptor of its own: the file (the empty path), a message, field,
// oneof, enum, enum value, service, method or extension. Names, types,
// numbers, options and the like are parts of one.
func declarationPath(path []int32) bool {
	if len(path) == 0 {
		return true
	}
	if len(path)%2 != 0 {
		return false
	}
	switch path[0] {
	case pathFileMessage:
		return messagePath(path[2:])
	case pathFileEnum:
		return leafPath(path[2:], pathEnumValue)
	case pathFileService:
		return leafPath(path[2:], pathServiceMethod)
	case pathFileExtension:
		return len(path) == 2
	}
	return false
}

// messagePath is declarationPath inside a message, rest being the path
// after the message's own (of even length).
func messagePath(rest []int32) bool {
	if len(rest) == 0 {
		return true
	}
	switch rest[0] {
	case pathMessageField, pathMessageExt, pathMessageOneof:
		return len(rest) == 2
	case pathMessageNested:
		return messagePath(rest[2:])
	case pathMessageEnum:
		return leafPath(rest[2:], pathEnumValue)
	}
	return false
}

// leafPath is declarationPath inside an enum or a service: itself, or one
// of its values or methods (field number child).
func leafPath(rest []int32, child int32) bool {
	return len(rest) == 0 || len(rest) == 2 && rest[0] == child
}

// fileHeader reads the name, dependency and public_dependency of an
// encoded FileDescriptorProto, or returns nil when b is malformed.
func fileHeader(b []byte) *descriptorpb.FileDescriptorProto {
	fd := &descriptorpb.FileDescriptorProto{}
	ok := eachField(b, func(num protowire.Number, typ protowire.Type, _, v []byte) bool {
		switch {
		case num == fileName && typ == protowire.BytesType:
			s, _ := protowire.ConsumeBytes(v)
			fd.Name = proto.String(string(s))
		case num == fileDependency && typ == protowire.BytesType:
			s, _ := protowire.ConsumeBytes(v)
			fd.Dependency = append(fd.Dependency, string(s))
		case num == filePublicDependency && typ == protowire.VarintType:
			x, _ := protowire.ConsumeVarint(v)
			fd.PublicDependency = append(fd.PublicDependency, int32(x))
		case num == filePublicDependency && typ == protowire.BytesType: // packed
			packed, _ := protowire.ConsumeBytes(v)
			for len(packed) > 0 {
				x, k := protowire.ConsumeVarint(packed)
				if k < 0 {
					return false
				}
				fd.PublicDependency = append(fd.PublicDependency, int32(x))
				packed = packed[k:]
			}
		}
		return true
	})
	if !ok {
		return nil
	}
	return fd
}

// eachField calls fn with every top-level field of the encoded message b:
// its number and wire type, the whole field (tag included) and its value.
// It reports false when b is malformed or fn returns false.
func eachField(b []byte, fn func(num protowire.Number, typ protowire.Type, whole, value []byte) bool) bool {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return false
		}
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if m < 0 || !fn(num, typ, b[:n+m], b[n:n+m]) {
			return false
		}
		b = b[n+m:]
	}
	return true
}

func validLang(lang string) bool {
	for _, l := range generate.Langs {
		if l == lang {
			return true
		}
	}
	return false
}
