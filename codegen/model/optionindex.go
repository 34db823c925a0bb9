package model

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/msgcontract/msgcontract/third_party/protocompile/ast"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// optIndex maps paths inside one option value ("biz_key",
// "retry.base_delay", "error_ranges[1].from") to the AST nodes of their
// values, so that diagnostics point at the offending value itself. The
// empty path maps to the option's whole value.
type optIndex struct {
	file  *ast.FileNode
	nodes map[string]ast.Node
	// fallback is the element carrying the option, for paths with no node.
	fallback ast.Node
	// declared is the element's position from its descriptor's source
	// info, used when there is no AST (descriptors from protoc).
	declared Pos
}

// indexOptions finds the option named ext (a fully qualified extension name)
// among n's options and indexes its value. It handles both the aggregate
// form `option (ext) = { a: 1 }` and the path form `option (ext).a = 1`.
func indexOptions(file *ast.FileNode, n ast.NodeWithOptions, ext string) *optIndex {
	idx := &optIndex{file: file, nodes: map[string]ast.Node{}, fallback: n}
	if n == nil || !hasOptions(n) {
		return idx
	}
	n.RangeOptions(func(opt *ast.OptionNode) bool {
		parts := opt.Name.Parts
		if len(parts) == 0 || !parts[0].IsExtension() || !extMatches(ext, string(parts[0].Name.AsIdentifier())) {
			return true
		}
		if _, ok := idx.nodes[""]; !ok {
			idx.nodes[""] = opt
		}
		var prefix []string
		for _, p := range parts[1:] {
			prefix = append(prefix, string(p.Name.AsIdentifier()))
		}
		idx.walk(strings.Join(prefix, "."), opt.Val)
		return true
	})
	return idx
}

func extMatches(full, written string) bool {
	written = strings.TrimPrefix(written, ".")
	return full == written || strings.HasSuffix(full, "."+written)
}

func join(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + "." + name
}

// walk records v at path and descends into message and array literals.
// Every occurrence of a field is recorded as "name[i]" (for repeated fields)
// and its first one also as "name" (for singular fields).
func (idx *optIndex) walk(path string, v ast.Node) {
	if _, ok := idx.nodes[path]; !ok {
		idx.nodes[path] = v
	}
	lit, ok := v.(*ast.MessageLiteralNode)
	if !ok {
		if arr, ok := v.(*ast.ArrayLiteralNode); ok {
			for i, e := range arr.Elements {
				idx.walk(fmt.Sprintf("%s[%d]", path, i), e)
			}
		}
		return
	}
	counts := map[string]int{}
	for _, f := range lit.Elements {
		name := string(f.Name.Name.AsIdentifier())
		key := join(path, name)
		if arr, ok := f.Val.(*ast.ArrayLiteralNode); ok {
			if _, seen := idx.nodes[key]; !seen {
				idx.nodes[key] = arr
			}
			for _, e := range arr.Elements {
				idx.walk(fmt.Sprintf("%s[%d]", key, counts[name]), e)
				counts[name]++
			}
			continue
		}
		idx.walk(fmt.Sprintf("%s[%d]", key, counts[name]), f.Val)
		if counts[name] == 0 {
			idx.walk(key, f.Val) // singular fields are addressed without an index
		}
		counts[name]++
	}
}

// node returns the node at path, or the nearest enclosing one.
func (idx *optIndex) node(path string) ast.Node {
	for {
		if n, ok := idx.nodes[path]; ok {
			return n
		}
		if path == "" {
			return idx.fallback
		}
		cut := strings.LastIndexAny(path, ".[")
		if cut < 0 {
			path = ""
		} else {
			path = path[:cut]
		}
	}
}

// has reports whether path was written in the source.
func (idx *optIndex) has(path string) bool {
	_, ok := idx.nodes[path]
	return ok
}

// pos returns the position of the value at path; without an AST, the
// position of the element carrying the option.
func (idx *optIndex) pos(path string) Pos {
	if idx.file == nil {
		return idx.declared
	}
	return nodePos(idx.file, idx.node(path))
}

// posIn returns the position of byte offset off inside the string value at
// path, when the literal is a plain one-piece string without escapes;
// otherwise the position of the literal itself.
func (idx *optIndex) posIn(path, value string, off int) Pos {
	if idx.file == nil {
		return idx.declared
	}
	n := idx.node(path)
	p := nodePos(idx.file, n)
	s, ok := n.(*ast.StringLiteralNode)
	if !ok || off > len(value) {
		return p
	}
	raw := idx.file.NodeInfo(s).RawText()
	if strings.ContainsRune(raw, '\\') || len(raw) != len(value)+2 {
		return p
	}
	p.Col += 1 + utf8.RuneCountInString(value[:off])
	return p
}

func nodePos(file *ast.FileNode, n ast.Node) Pos {
	if file == nil || n == nil {
		return Pos{}
	}
	sp := file.NodeInfo(n).Start()
	return Pos{File: sp.Filename, Line: sp.Line, Col: sp.Col}
}

// hasOptions guards RangeOptions of compact-option nodes, which panics when
// the element was written without options.
func hasOptions(n ast.NodeWithOptions) bool {
	switch n := n.(type) {
	case *ast.EnumValueNode:
		return n.Options != nil
	case *ast.FieldNode:
		return n.Options != nil
	}
	return true
}

// Field numbers of the options field of the descriptor.proto messages
// whose elements carry msgcontract's options (the last but one element of
// an option statement's source path).
const (
	fileOptions      = 8 // FileDescriptorProto.options
	messageOptions   = 7 // DescriptorProto.options
	enumOptions      = 3 // EnumDescriptorProto.options
	enumValueOptions = 3 // EnumValueDescriptorProto.options
)

// optionPos is where option xt of d is written according to d's file's
// source info: protoc records each option statement (`option (ext) =
// {...};`, or an enum value's `[(ext) = {...}]`) under d's path, its
// options field and the extension's number. Source info holds nothing
// inside the option's value, so this is as close as a plugin gets; when
// the statement has no location (no source info, or the option set field
// by field), it is d's declaration.
func optionPos(d protoreflect.Descriptor, xt protoreflect.ExtensionType) Pos {
	p := declPos(d)
	// The option statement's path is the element's path (none for the
	// file), its options field and the extension's number.
	var (
		field  int32
		isFile bool
		path   protoreflect.SourcePath
		locs   = d.ParentFile().SourceLocations()
	)
	switch d.(type) {
	case protoreflect.FileDescriptor:
		field, isFile = fileOptions, true
	case protoreflect.MessageDescriptor:
		field = messageOptions
	case protoreflect.EnumDescriptor:
		field = enumOptions
	case protoreflect.EnumValueDescriptor:
		field = enumValueOptions
	default:
		return p
	}
	if !isFile {
		if path = locs.ByDescriptor(d).Path; path == nil {
			return p
		}
	}
	opt := locs.ByPath(append(path[:len(path):len(path)], field, int32(xt.TypeDescriptor().Number())))
	if opt.Path == nil {
		return p
	}
	p.Line, p.Col = opt.StartLine+1, opt.StartColumn+1
	return p
}

// declPos is where d is declared according to its file's source info
// (what protoc sends a plugin), or just the file when it has none. Lines
// and columns in source info are 0-based.
func declPos(d protoreflect.Descriptor) Pos {
	fd := d.ParentFile()
	p := Pos{File: fd.Path()}
	if loc := fd.SourceLocations().ByDescriptor(d); loc.Path != nil || loc.StartLine != 0 || loc.StartColumn != 0 {
		p.Line, p.Col = loc.StartLine+1, loc.StartColumn+1
	}
	return p
}
