package java

import (
	"fmt"
	"path"
	"strings"
	"unicode/utf16"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/msgcontract/msgcontract/codegen/model"
)

// This file is the one place where proto names become Java names. It
// follows protoc's Java generator (java/names.cc and name_resolver.cc), so
// generated contract classes call the accessors protoc actually emitted.

// keywords are Java's reserved words and literals; a nested class name
// equal to one gets a trailing underscore (nestedNames).
var keywords = map[string]bool{
	"abstract": true, "assert": true, "boolean": true, "break": true, "byte": true, "case": true,
	"catch": true, "char": true, "class": true, "const": true, "continue": true, "default": true,
	"do": true, "double": true, "else": true, "enum": true, "extends": true, "final": true,
	"finally": true, "float": true, "for": true, "goto": true, "if": true, "implements": true,
	"import": true, "instanceof": true, "int": true, "interface": true, "long": true, "native": true,
	"new": true, "package": true, "private": true, "protected": true, "public": true, "return": true,
	"short": true, "static": true, "strictfp": true, "super": true, "switch": true,
	"synchronized": true, "this": true, "throw": true, "throws": true, "transient": true, "try": true,
	"void": true, "volatile": true, "true": true, "false": true, "null": true, "var": true,
	"record": true, "yield": true, "sealed": true, "permits": true, "_": true,
}

// forbiddenAccessors are field names whose accessors would clash with
// methods of Object or Message; protoc appends "_" to their camel-case
// name (a field "class" gets getClass_()). Compared without underscores,
// case-insensitively, as protoc does.
var forbiddenAccessors = map[string]bool{
	"class": true, "defaultinstancefortype": true, "parserfortype": true, "descriptorfortype": true,
	"allfields": true, "unknownfields": true, "initializationerrorstring": true,
	"cachedsize": true, "serializedsize": true,
}

// camel is protoc's UnderscoresToCamelCase: letters after an underscore,
// a digit or any other non-letter are capitalized; non-alphanumerics are
// dropped.
func camel(s string, capFirst bool) string {
	var b strings.Builder
	capNext := capFirst
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z':
			if capNext {
				c -= 'a' - 'A'
			}
			b.WriteByte(c)
			capNext = false
		case 'A' <= c && c <= 'Z':
			if i == 0 && !capFirst {
				c += 'a' - 'A'
			}
			b.WriteByte(c)
			capNext = false
		case '0' <= c && c <= '9':
			b.WriteByte(c)
			capNext = true
		default:
			capNext = true
		}
	}
	return b.String()
}

// accessorBase is the capitalized name protoc uses in a field's accessors:
// get<Base>(), has<Base>(), get<Base>Value(). A proto2 group (and an
// editions delimited field shaped like one) is named after its message
// type, as protoc's Java generator names it: "group Item" is field "item"
// with accessors getItem().
func accessorBase(fd protoreflect.FieldDescriptor) string {
	name := string(fd.Name())
	if groupLike(fd) {
		name = string(fd.Message().Name())
	}
	base := camel(name, true)
	if forbiddenAccessors[strings.ToLower(strings.ReplaceAll(name, "_", ""))] {
		base += "_"
	}
	return base
}

// groupLike is protoc's IsGroupLike: a delimited message field whose name
// is its type's name lower-cased, the type declared beside the field.
func groupLike(fd protoreflect.FieldDescriptor) bool {
	if fd.Kind() != protoreflect.GroupKind {
		return false
	}
	md := fd.Message()
	if strings.ToLower(string(md.Name())) != string(fd.Name()) || md.ParentFile().Path() != fd.ParentFile().Path() {
		return false
	}
	// Parent is the containing message, or for an extension its scope.
	return md.Parent().FullName() == fd.Parent().FullName()
}

func fileOptions(fd protoreflect.FileDescriptor) *descriptorpb.FileOptions {
	if o, ok := fd.Options().(*descriptorpb.FileOptions); ok && o != nil {
		return o
	}
	return &descriptorpb.FileOptions{}
}

// Package is the file's Java package: java_package, else the proto package.
func Package(fd protoreflect.FileDescriptor) string {
	if o := fileOptions(fd); o.JavaPackage != nil {
		return o.GetJavaPackage()
	}
	return string(fd.Package())
}

// OuterClass is the file's outer class name: java_outer_classname, else the
// camel-cased file name. Before edition 2024 (protoc's feature
// use_old_outer_classname_default) "OuterClass" is appended when a type of
// the file already has that name; from edition 2024 on "Proto" is always
// appended (and protoc refuses a file whose type has that name).
func OuterClass(fd protoreflect.FileDescriptor) string {
	if o := fileOptions(fd); o.JavaOuterClassname != nil {
		return o.GetJavaOuterClassname()
	}
	name := fileBaseClass(fd)
	if !oldOuterClassnameDefault(fd) {
		return name + "Proto"
	}
	if topLevelName(fd, name) {
		name += "OuterClass"
	}
	return name
}

// fileBaseClass is the camel-cased file name, the stem of the default outer
// class and of the contract class.
func fileBaseClass(fd protoreflect.FileDescriptor) string {
	return camel(strings.TrimSuffix(path.Base(fd.Path()), ".proto"), true)
}

// oldOuterClassnameDefault is pb.java's use_old_outer_classname_default as
// it resolves for fd: true before edition 2024, false from it on (users
// cannot set it: the feature was removed in the edition that introduced it).
func oldOuterClassnameDefault(fd protoreflect.FileDescriptor) bool {
	return model.Edition(fd) < descriptorpb.Edition_EDITION_2024
}

// javaFeaturesField and nestInFileClassField are pb.JavaFeatures' number as
// an extension of google.protobuf.FeatureSet and its nest_in_file_class
// field; nestYes and nestNo are that field's values YES and NO.
const (
	javaFeaturesField    = 1001
	nestInFileClassField = 5
	nestNo               = 1
	nestYes              = 2
)

// nestedInFileClass is protoc's NestInFileClass for a top-level message or
// enum: pb.java's nest_in_file_class set on the type (it targets messages,
// enums and services only, so nothing is inherited from the file), else the
// edition's default: NO from edition 2024 on, LEGACY before it, which means
// "unless java_multiple_files".
func nestedInFileClass(d protoreflect.Descriptor) bool {
	var features *descriptorpb.FeatureSet
	switch o := d.Options().(type) {
	case *descriptorpb.MessageOptions:
		features = o.GetFeatures()
	case *descriptorpb.EnumOptions:
		features = o.GetFeatures()
	}
	switch featureEnum(features, javaFeaturesField, nestInFileClassField) {
	case nestYes:
		return true
	case nestNo:
		return false
	}
	if model.Edition(d.ParentFile()) >= descriptorpb.Edition_EDITION_2024 {
		return false
	}
	return !fileOptions(d.ParentFile()).GetJavaMultipleFiles()
}

// featureEnum reads field of the language feature message extending
// FeatureSet at number ext, from the wire form of fs: the loader keeps
// language features it has no Go type for as unknown fields. 0 when unset.
func featureEnum(fs *descriptorpb.FeatureSet, ext, field protowire.Number) uint64 {
	if fs == nil {
		return 0
	}
	raw, err := proto.Marshal(fs)
	if err != nil {
		return 0
	}
	var v uint64
	scan(raw, ext, protowire.BytesType, func(lang []byte) {
		scan(lang, field, protowire.VarintType, func(b []byte) {
			if x, n := protowire.ConsumeVarint(b); n > 0 {
				v = x // the last occurrence wins, as in protobuf's merge
			}
		})
	})
	return v
}

// scan calls f with the value bytes of every field num of type typ in b.
func scan(b []byte, num protowire.Number, typ protowire.Type, f func([]byte)) {
	for len(b) > 0 {
		n, t, l := protowire.ConsumeTag(b)
		if l < 0 {
			return
		}
		b = b[l:]
		vl := protowire.ConsumeFieldValue(n, t, b)
		if vl < 0 {
			return
		}
		if n == num && t == typ {
			v := b[:vl]
			if t == protowire.BytesType {
				v, _ = protowire.ConsumeBytes(v)
			}
			f(v)
		}
		b = b[vl:]
	}
}

// topLevelName is protoc's HasConflictingClassName: any message or enum
// of the file, nested ones included, or any service named name.
func topLevelName(fd protoreflect.FileDescriptor, name string) bool {
	if typeNamed(fd.Messages(), fd.Enums(), name) {
		return true
	}
	for i := 0; i < fd.Services().Len(); i++ {
		if string(fd.Services().Get(i).Name()) == name {
			return true
		}
	}
	return false
}

func typeNamed(msgs protoreflect.MessageDescriptors, enums protoreflect.EnumDescriptors, name string) bool {
	for i := 0; i < enums.Len(); i++ {
		if string(enums.Get(i).Name()) == name {
			return true
		}
	}
	for i := 0; i < msgs.Len(); i++ {
		m := msgs.Get(i)
		if string(m.Name()) == name || typeNamed(m.Messages(), m.Enums(), name) {
			return true
		}
	}
	return false
}

// ClassName is the fully qualified Java class protoc generates for a message
// or enum.
func ClassName(d protoreflect.Descriptor) string {
	fd := d.ParentFile()
	var chain []string
	for p := d; p != nil && p != protoreflect.Descriptor(fd); p = p.Parent() {
		chain = append([]string{string(p.Name())}, chain...)
	}
	if nestedInFileClass(topLevel(d)) {
		chain = append([]string{OuterClass(fd)}, chain...)
	}
	if pkg := Package(fd); pkg != "" {
		chain = append([]string{pkg}, chain...)
	}
	return strings.Join(chain, ".")
}

// topLevel is the top-level message or enum that d is, or is nested in.
func topLevel(d protoreflect.Descriptor) protoreflect.Descriptor {
	for {
		p := d.Parent()
		if _, ok := p.(protoreflect.FileDescriptor); ok || p == nil {
			return d
		}
		d = p
	}
}

// ContractClass is the name of the contract class generated for a file:
// the outer class name plus "Contract" (without protoc's "OuterClass", or
// from edition 2024 on its "Proto" suffix), with "_" appended while that is
// the name of a class protoc generates in the same package from this file
// (a top-level type that is not nested in the outer class, or the outer
// class itself).
func ContractClass(fd protoreflect.FileDescriptor) string {
	outer := OuterClass(fd)
	stem := strings.TrimSuffix(outer, "OuterClass")
	if fileOptions(fd).JavaOuterClassname == nil && !oldOuterClassnameDefault(fd) {
		stem = fileBaseClass(fd)
	}
	name := stem + "Contract"
	for name == outer || topLevelClass(fd, name) {
		name += "_"
	}
	return name
}

// topLevelClass reports whether protoc writes a top-level class name for
// one of fd's types: a message or enum that is not nested in the outer
// class, or one nested in such a type.
func topLevelClass(fd protoreflect.FileDescriptor, name string) bool {
	for i := 0; i < fd.Messages().Len(); i++ {
		m := fd.Messages().Get(i)
		if !nestedInFileClass(m) && (string(m.Name()) == name || typeNamed(m.Messages(), m.Enums(), name)) {
			return true
		}
	}
	for i := 0; i < fd.Enums().Len(); i++ {
		if e := fd.Enums().Get(i); !nestedInFileClass(e) && string(e.Name()) == name {
			return true
		}
	}
	// A service's class (java_generic_services) follows the file's default.
	if model.Edition(fd) >= descriptorpb.Edition_EDITION_2024 || fileOptions(fd).GetJavaMultipleFiles() {
		for i := 0; i < fd.Services().Len(); i++ {
			if string(fd.Services().Get(i).Name()) == name {
				return true
			}
		}
	}
	return false
}

// contractScope are the simple names the contract class body refers to
// (support classes, java.lang and java.util types, its private Registry):
// a nested class of that name would shadow them.
var contractScope = map[string]bool{
	"BizKeyBuilder": true, "BizKeyException": true, "Classification": true, "ContractException": true,
	"ErrorRange": true, "ErrorRules": true, "EventSpec": true, "RetryPolicy": true, "StateMachine": true,
	"Transit": true, "Version": true, "List": true, "Map": true, "String": true, "Object": true,
	"SuppressWarnings": true, "Override": true, "Registry": true, "io": true, "java": true,
}

// nestedNames names the nested classes generated for a file's events and
// state machines, in that order: the proto name, nested names joined with
// "_" (Order.Created → Order_Created), then "_" appended while the name
// is a Java keyword, a name the contract class refers to, the contract
// class itself, the first segment of a package the class refers to, or
// the name of an earlier nested class (so Order.Created and Order_Created
// get Order_Created and Order_Created_).
func nestedNames(f *model.File) (events, machines []string) {
	taken := map[string]bool{ContractClass(f.Desc): true}
	refer := func(d protoreflect.Descriptor) {
		if first, _, _ := strings.Cut(ClassName(d), "."); first != "" {
			taken[first] = true
		}
	}
	for _, e := range f.Events {
		refer(e.Desc)
	}
	for _, sm := range f.StateMachines {
		refer(sm.Desc)
	}
	name := func(d protoreflect.Descriptor) string {
		n := strings.TrimPrefix(strings.TrimPrefix(string(d.FullName()), string(d.ParentFile().Package())), ".")
		n = strings.ReplaceAll(n, ".", "_")
		for keywords[n] || contractScope[n] || taken[n] {
			n += "_"
		}
		taken[n] = true
		return n
	}
	for _, e := range f.Events {
		events = append(events, name(e.Desc))
	}
	for _, sm := range f.StateMachines {
		machines = append(machines, name(sm.Desc))
	}
	return events, machines
}

// String returns s as a Java string literal. Everything outside printable
// ASCII is escaped, so generated sources are ASCII; control characters use
// octal escapes because javac translates \u escapes before lexing.
func String(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\%03o`, r)
		case r < 0x7f:
			b.WriteRune(r)
		case r > 0xffff:
			r1, r2 := utf16.EncodeRune(r)
			fmt.Fprintf(&b, `\u%04x\u%04x`, r1, r2)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
