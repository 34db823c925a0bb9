package plugin

// Narrowing protoc's request to the files that can carry contracts, and
// their source info to what the plugin reads, before anything is built.

import (
	"slices"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/pluginpb"
)

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
// (directly, through public imports, or with edition 2024's `import
// option`), and the names of those files and of every file they import,
// transitively, option imports included. files need only their name,
// dependency, public_dependency and option_dependency fields.
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
		for _, dep := range imports(byName[name]) {
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
		for _, dep := range imports(byName[name]) {
			need(dep)
		}
	}
	for _, name := range generate {
		need(name)
	}
	return generate, needed
}

// imports are the files f imports, with `import` or `import option`.
func imports(f *descriptorpb.FileDescriptorProto) []string {
	if len(f.GetOptionDependency()) == 0 {
		return f.GetDependency()
	}
	return append(f.GetDependency()[:len(f.GetDependency()):len(f.GetDependency())], f.GetOptionDependency()...)
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
	fileOptionDependency     = 15
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
	var extendees map[string]bool // of descriptor.proto, when only options.proto needs it
	if onlyOptionsImport(files, needed) {
		for _, f := range fields {
			if f.num == reqProtoFile && f.file == optionsProto {
				extendees = optionsExtendees(f.v)
			}
		}
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
			if f.file == descriptorProto && extendees != nil {
				if out, ok = extendeesOnly(out, f.v, extendees); ok {
					continue
				}
			}
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
// enums, enum values, services, methods, extensions) and of their custom
// option statements, in their order. Those are the only ones the plugin
// reads: positions of lint findings (without an AST a finding points at
// its option statement or its element) and leading comments. The rest,
// three quarters of the locations (names, types, numbers, standard
// options, imports...), would be decoded and indexed for nothing. Without generate
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
	return ok && (declarationPath(path) || customOptionPath(path)), ok
}

// customOptionPath reports whether a source path leads to a custom option
// statement of a declaration: the declaration's path, its options field and
// an extension's number (1000 and up in every options message; the standard
// options are numbered below). Lint findings in msgcontract's options point
// there (model.optionPos).
func customOptionPath(path []int32) bool {
	n := len(path)
	return n >= 2 && path[n-1] >= 1000 && declarationPath(path[:n-2])
}

// Field numbers of descriptor.proto's declarations: the elements of a
// declaration's source path, and fields the trimming of descriptor.proto
// reads and writes.
const (
	fileMessage      = 4
	fileEnum         = 5
	fileService      = 6
	fileExtension    = 7
	messageField     = 2
	messageNested    = 3
	messageEnum      = 4
	messageExtension = 6
	messageOneof     = 8
	enumValue        = 2
	serviceMethod    = 2
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
	case fileMessage:
		return messagePath(path[2:])
	case fileEnum:
		return leafPath(path[2:], enumValue)
	case fileService:
		return leafPath(path[2:], serviceMethod)
	case fileExtension:
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
	case messageField, messageExtension, messageOneof:
		return len(rest) == 2
	case messageNested:
		return messagePath(rest[2:])
	case messageEnum:
		return leafPath(rest[2:], enumValue)
	}
	return false
}

// leafPath is declarationPath inside an enum or a service: itself, or one
// of its values or methods (field number child).
func leafPath(rest []int32, child int32) bool {
	return len(rest) == 0 || len(rest) == 2 && rest[0] == child
}

// fileHeader reads the name, dependency, public_dependency and
// option_dependency of an encoded FileDescriptorProto, or returns nil when
// b is malformed.
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
		case num == fileOptionDependency && typ == protowire.BytesType:
			s, _ := protowire.ConsumeBytes(v)
			fd.OptionDependency = append(fd.OptionDependency, string(s))
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

// descriptorProto is protobuf's own descriptor.proto: options.proto
// imports it to extend its options messages.
const descriptorProto = "google/protobuf/descriptor.proto"

// Field numbers of descriptor.proto's messages that the trimming of
// descriptor.proto reads and writes, besides the declarations' above.
const (
	filePackage        = 2
	fileOptions        = 8
	fileSyntax         = 12
	fileEdition        = 14
	messageName        = 1
	messageExtRange    = 5
	extRangeStart      = 1
	extRangeEnd        = 2
	fieldExtendee      = 2
	fieldTypeName      = 6
	protobufPackageDot = ".google.protobuf."
)

// onlyOptionsImport reports whether descriptor.proto is needed only
// because options.proto imports it: no other file kept imports it, so
// nothing but options.proto's extensions refers to it.
func onlyOptionsImport(files []*descriptorpb.FileDescriptorProto, needed map[string]bool) bool {
	if !needed[descriptorProto] || !needed[optionsProto] {
		return false
	}
	for _, f := range files {
		if f.GetName() != optionsProto && needed[f.GetName()] && slices.Contains(f.GetDependency(), descriptorProto) {
			return false
		}
	}
	return true
}

// optionsExtendees returns the short names of the descriptor.proto
// messages that the encoded options.proto extends (FileOptions,
// MessageOptions...), or nil when it refers to descriptor.proto in any
// other way (a field of one of its types, a nested extendee) or cannot
// be read: descriptor.proto is then kept whole.
func optionsExtendees(file []byte) map[string]bool {
	names := map[string]bool{}
	// field checks one FieldDescriptorProto: an extendee must be a
	// top-level descriptor.proto message; no type may be one of its.
	field := func(b []byte, extension bool) bool {
		return eachBytesField(b, func(num protowire.Number, s []byte) bool {
			name, ours := strings.CutPrefix(string(s), protobufPackageDot)
			switch {
			case num == fieldTypeName:
				return !ours
			case num == fieldExtendee && extension && ours && name != "" && !strings.Contains(name, "."):
				names[name] = true
			case num == fieldExtendee && ours:
				return false
			}
			return true
		})
	}
	var message func(b []byte) bool
	message = func(b []byte) bool {
		return eachBytesField(b, func(num protowire.Number, s []byte) bool {
			switch num {
			case messageField, messageExtension: // an extend inside a message keeps the file whole
				return field(s, false)
			case messageNested:
				return message(s)
			}
			return true
		})
	}
	ok := eachBytesField(file, func(num protowire.Number, s []byte) bool {
		switch num {
		case fileExtension:
			return field(s, true)
		case fileMessage:
			return message(s)
		}
		return true
	})
	if !ok || len(names) == 0 {
		return nil
	}
	return names
}

// extendeesOnly appends the encoded descriptor.proto file to dst as a
// proto_file field of a request, trimmed to what options.proto needs of
// it: its name, package, options, syntax and edition, and of its
// messages only the extendees, each with its name and extension ranges
// (start and end). The plugin builds descriptors and protogen's view of
// every file it keeps, and descriptor.proto's 30-odd messages would cost
// half of that view when the contracts are few. The options themselves
// are decoded into descriptorpb's Go types, which do not depend on this
// copy. When file cannot be read or lacks an extendee, dst is returned as
// it was with false, and file is kept whole.
func extendeesOnly(dst, file []byte, extendees map[string]bool) ([]byte, bool) {
	var (
		body  []byte
		found int
	)
	ok := eachField(file, func(num protowire.Number, typ protowire.Type, whole, v []byte) bool {
		switch num {
		case fileName, filePackage, fileOptions, fileSyntax, fileEdition:
			body = append(body, whole...)
		case fileMessage:
			if typ != protowire.BytesType {
				return false
			}
			msg, _ := protowire.ConsumeBytes(v)
			var (
				name   string
				ranges []byte
			)
			ok := eachBytesField(msg, func(num protowire.Number, s []byte) bool {
				switch num {
				case messageName:
					name = string(s)
				case messageExtRange:
					var r []byte
					if !eachField(s, func(num protowire.Number, _ protowire.Type, whole, _ []byte) bool {
						if num == extRangeStart || num == extRangeEnd {
							r = append(r, whole...)
						}
						return true
					}) {
						return false
					}
					ranges = protowire.AppendTag(ranges, messageExtRange, protowire.BytesType)
					ranges = protowire.AppendBytes(ranges, r)
				}
				return true
			})
			if !ok {
				return false
			}
			if !extendees[name] {
				return true
			}
			found++
			n := protowire.SizeTag(messageName) + protowire.SizeBytes(len(name)) + len(ranges)
			body = protowire.AppendTag(body, fileMessage, protowire.BytesType)
			body = protowire.AppendVarint(body, uint64(n))
			body = protowire.AppendTag(body, messageName, protowire.BytesType)
			body = protowire.AppendString(body, name)
			body = append(body, ranges...)
		}
		return true
	})
	if !ok || found != len(extendees) {
		return dst, false
	}
	dst = protowire.AppendTag(dst, reqProtoFile, protowire.BytesType)
	return protowire.AppendBytes(dst, body), true
}

// eachBytesField is eachField over the length-delimited fields of b only
// (strings, bytes, messages), with each one's contents.
func eachBytesField(b []byte, fn func(num protowire.Number, contents []byte) bool) bool {
	return eachField(b, func(num protowire.Number, typ protowire.Type, _, v []byte) bool {
		if typ != protowire.BytesType {
			return true
		}
		contents, _ := protowire.ConsumeBytes(v)
		return fn(num, contents)
	})
}
