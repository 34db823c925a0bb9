package java

import (
	"fmt"
	"path"
	"strings"
	"unicode/utf16"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
)

// This file is the one place where proto names become Java names. It
// follows protoc's Java generator (java/names.cc and name_resolver.cc), so
// generated contract classes call the accessors protoc actually emitted.

// keywords are Java's reserved words and literals; a proto name equal to
// one gets a trailing underscore where msgcontract uses it as an identifier.
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

// Ident escapes a proto name used as a Java identifier.
func Ident(name string) string {
	if keywords[name] {
		return name + "_"
	}
	return name
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
// get<Base>(), has<Base>(), get<Base>Value().
func accessorBase(fd protoreflect.FieldDescriptor) string {
	name := string(fd.Name())
	base := camel(name, true)
	if forbiddenAccessors[strings.ToLower(strings.ReplaceAll(name, "_", ""))] {
		base += "_"
	}
	return base
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

func topLevelName(fd protoreflect.FileDescriptor, name string) bool {
	for i := 0; i < fd.Messages().Len(); i++ {
		if string(fd.Messages().Get(i).Name()) == name {
			return true
		}
	}
	for i := 0; i < fd.Enums().Len(); i++ {
		if string(fd.Enums().Get(i).Name()) == name {
			return true
		}
	}
	for i := 0; i < fd.Services().Len(); i++ {
		if string(fd.Services().Get(i).Name()) == name {
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
// the outer class name plus "Contract".
func ContractClass(fd protoreflect.FileDescriptor) string {
	return strings.TrimSuffix(OuterClass(fd), "OuterClass") + "Contract"
}

// nestedName is the name of the nested class generated for an event or
// state machine: its proto name, nested names joined with "_".
func nestedName(d protoreflect.Descriptor) string {
	name := strings.TrimPrefix(string(d.FullName()), string(d.ParentFile().Package()))
	name = strings.TrimPrefix(name, ".")
	return Ident(strings.ReplaceAll(name, ".", "_"))
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
