package java

import (
	"fmt"
	"path"
	"strings"
	"unicode/utf16"

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
// camel-cased file name, with "OuterClass" appended when a top-level type
// already has that name.
func OuterClass(fd protoreflect.FileDescriptor) string {
	if o := fileOptions(fd); o.JavaOuterClassname != nil {
		return o.GetJavaOuterClassname()
	}
	base := strings.TrimSuffix(path.Base(fd.Path()), ".proto")
	name := camel(base, true)
	if topLevelName(fd, name) {
		name += "OuterClass"
	}
	return name
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
	if !fileOptions(fd).GetJavaMultipleFiles() {
		chain = append([]string{OuterClass(fd)}, chain...)
	}
	if pkg := Package(fd); pkg != "" {
		chain = append([]string{pkg}, chain...)
	}
	return strings.Join(chain, ".")
}

// ContractClass is the name of the contract class generated for a file:
// the outer class name plus "Contract", with "_" appended while that is
// the name of a class protoc generates in the same package from this
// file (a top-level type under java_multiple_files, or the outer class).
func ContractClass(fd protoreflect.FileDescriptor) string {
	name := strings.TrimSuffix(OuterClass(fd), "OuterClass") + "Contract"
	for name == OuterClass(fd) || (fileOptions(fd).GetJavaMultipleFiles() && topLevelName(fd, name)) {
		name += "_"
	}
	return name
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
