package java

import (
	"fmt"
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/msgcontract/msgcontract/codegen/model"
)

// RuleFieldName is the lint rule of a field whose protoc Java accessor
// clashes with a static method of every message class.
const RuleFieldName = "JAVA_FIELD_NAME"

// staticAccessors are accessor bases whose get<Base>() would clash with a
// static method protoc declares on every message class (and does not
// rename, unlike getClass_()).
var staticAccessors = map[string]string{"Descriptor": "getDescriptor", "DefaultInstance": "getDefaultInstance"}

// RuleOuterClass is the lint rule of a file whose protoc Java outer class
// would not be a Java identifier.
const RuleOuterClass = "JAVA_OUTER_CLASS"

// RuleClassCollision is the lint rule of a contract class whose fully
// qualified name another class of the same build has.
const RuleClassCollision = "JAVA_CLASS_COLLISION"

// Check reports, positioned, contracts whose Java protoc itself cannot
// represent: an outer class name (from the file name) that is no Java
// identifier, as for 2fa.proto, whose classes protoc would put in a class
// "2Fa"; a field whose accessor clashes with a static method of every
// message (a field "descriptor" gets getDescriptor()); a contract class
// named like another file's contract class or like a class protoc
// generates for another file (classCollisions). The linter, generate and
// the plugin call it, so such a file is rejected with the fix instead of
// failing in javac or being written over.
func Check(set *model.Set) model.Diagnostics {
	var ds model.Diagnostics
	var fields func(protoreflect.MessageDescriptors)
	fields = func(ms protoreflect.MessageDescriptors) {
		for i := 0; i < ms.Len(); i++ {
			m := ms.Get(i)
			for j := 0; j < m.Fields().Len(); j++ {
				fd := m.Fields().Get(j)
				if static := staticAccessors[accessorBase(fd)]; static != "" {
					ds = append(ds, model.Diagnostic{Pos: set.Position(fd), Rule: RuleFieldName, Message: fmt.Sprintf(
						"field %s of %s gets the Java accessor get%s(), which clashes with the static %s() protoc generates on every message, so protoc's Java output does not compile; rename the field",
						fd.Name(), m.Name(), accessorBase(fd), static)})
				}
			}
			fields(m.Messages())
		}
	}
	for _, f := range set.Files {
		if !f.HasContract() {
			continue
		}
		fields(f.Desc.Messages())
		if name := OuterClass(f.Desc); !javaIdent(name) {
			ds = append(ds, model.Diagnostic{Pos: model.Pos{File: f.DisplayPath, Line: 1, Col: 1}, Rule: RuleOuterClass,
				Message: fmt.Sprintf("protoc names this file's Java outer class %q, which is not a Java identifier; set option java_outer_classname = \"%s\"; (or rename the file)",
					name, suggestClass(name))})
		}
	}
	return append(ds, classCollisions(set)...)
}

// classCollisions reports each contract file whose contract class has the
// fully qualified name of a class generated from another file: the
// contract class of an earlier file of the set (generate would write one
// file over the other, and protoc refuses a plugin writing a file twice),
// or a top-level class protoc generates for any file the set compiled,
// imports included (javac: duplicate class). Those are protoc's outer
// class (java_outer_classname, else the file name in CamelCase, with
// "OuterClass" appended when a type of the file has that name, or from
// edition 2024 on "Proto" always) and each top-level message and enum that
// is not nested in it (java_multiple_files; from edition 2024 on, unless
// pb.java's nest_in_file_class says YES), and services with
// java_generic_services. (The OrBuilder interface of a message never
// ends in "Contract" like a contract class.) A contract class never
// collides with its own file's classes: ContractClass steps aside.
// Findings point at the file (1:1), as the plugin's request holds no
// position of standard options.
func classCollisions(set *model.Set) model.Diagnostics {
	var (
		ds        model.Diagnostics
		protoc    map[string]javaClass // by fully qualified name, built on first use
		contracts = map[string]*model.File{}
	)
	for _, f := range set.Files {
		if !f.HasContract() {
			continue
		}
		if protoc == nil {
			protoc = protocClasses(set)
		}
		pkg, class := Package(f.Desc), ContractClass(f.Desc)
		name := qualified(pkg, class)
		pos := model.Pos{File: f.DisplayPath, Line: 1, Col: 1}
		if other, ok := contracts[name]; ok {
			outers := "outer class " + OuterClass(f.Desc)
			if OuterClass(other.Desc) != OuterClass(f.Desc) {
				outers = "outer classes " + OuterClass(other.Desc) + " and " + OuterClass(f.Desc)
			}
			ds = append(ds, model.Diagnostic{Pos: pos, Rule: RuleClassCollision, Message: fmt.Sprintf(
				"contract class %s is also generated for %s, so one would be written over the other and a contract lost: both files are in Java package %s with %s; set another java_outer_classname in one of them",
				name, other.Path, pkg, outers)})
			continue
		}
		contracts[name] = f
		if c, ok := protoc[name]; ok && c.file != f.Path {
			outer := suggestOuter(f.Desc, protoc, contracts)
			ds = append(ds, model.Diagnostic{Pos: pos, Rule: RuleClassCollision, Message: fmt.Sprintf(
				"contract class %s of this file is also %s, which protoc generates in the same Java package, so javac reports a duplicate class; set option java_outer_classname = \"%s\"; in this file (its contract class is then %sContract), or rename %s",
				name, c.what, outer, outer, c.rename)})
		}
	}
	return ds
}

// javaClass is a top-level class protoc generates: the file it comes
// from, what it is and what to rename instead, as findings say them.
type javaClass struct{ file, what, rename string }

// protocClasses are the top-level classes protoc generates for every
// file set compiled, imports included, by fully qualified name.
func protocClasses(set *model.Set) map[string]javaClass {
	out := map[string]javaClass{}
	set.Registry.RangeFiles(func(fd protoreflect.FileDescriptor) bool {
		pkg := Package(fd)
		add := func(name, what, rename string) {
			if _, ok := out[qualified(pkg, name)]; !ok {
				out[qualified(pkg, name)] = javaClass{file: fd.Path(), what: what, rename: rename}
			}
		}
		o := fileOptions(fd)
		origin := "named after its file"
		if o.JavaOuterClassname != nil {
			origin = "its java_outer_classname"
		}
		add(OuterClass(fd), fmt.Sprintf("the outer class of %s (%s)", fd.Path(), origin), "one of the files")
		why := "java_multiple_files"
		if model.Edition(fd) >= descriptorpb.Edition_EDITION_2024 {
			why = "edition 2024 does not nest it in the outer class"
		}
		for i := 0; i < fd.Messages().Len(); i++ {
			if m := fd.Messages().Get(i); !nestedInFileClass(m) {
				add(string(m.Name()), fmt.Sprintf("the class of message %s of %s (%s)", m.FullName(), fd.Path(), why), "the message")
			}
		}
		for i := 0; i < fd.Enums().Len(); i++ {
			if e := fd.Enums().Get(i); !nestedInFileClass(e) {
				add(string(e.Name()), fmt.Sprintf("the class of enum %s of %s (%s)", e.FullName(), fd.Path(), why), "the enum")
			}
		}
		if o.GetJavaGenericServices() && (o.GetJavaMultipleFiles() || model.Edition(fd) >= descriptorpb.Edition_EDITION_2024) {
			for i := 0; i < fd.Services().Len(); i++ {
				sv := fd.Services().Get(i)
				add(string(sv.Name()), fmt.Sprintf("the class of service %s of %s (java_multiple_files)", sv.FullName(), fd.Path()), "the service")
			}
		}
		return true
	})
	return out
}

// suggestOuter is a java_outer_classname for fd such that neither it nor
// the contract class it gives is a class protoc or another contract
// generates: the outer class plus "Proto", or "Protos", then digits.
func suggestOuter(fd protoreflect.FileDescriptor, protoc map[string]javaClass, contracts map[string]*model.File) string {
	base, pkg := strings.TrimSuffix(OuterClass(fd), "OuterClass"), Package(fd)
	if fileOptions(fd).JavaOuterClassname == nil && !oldOuterClassnameDefault(fd) {
		base = fileBaseClass(fd)
	}
	for i := 0; ; i++ {
		name := base + "Proto"
		switch {
		case i == 1:
			name = base + "Protos"
		case i > 1:
			name = fmt.Sprintf("%sProto%d", base, i)
		}
		_, outerTaken := protoc[qualified(pkg, name)]
		_, protocTaken := protoc[qualified(pkg, name+"Contract")]
		_, contractTaken := contracts[qualified(pkg, name+"Contract")]
		if !outerTaken && !protocTaken && !contractTaken {
			return name
		}
	}
}

func qualified(pkg, class string) string {
	if pkg == "" {
		return class
	}
	return pkg + "." + class
}

func javaIdent(s string) bool {
	if s == "" || keywords[s] {
		return false
	}
	for i, c := range s {
		if !(c == '_' || c == '$' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || i > 0 && '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}

func suggestClass(name string) string {
	if name == "" || strings.IndexByte("0123456789", name[0]) < 0 {
		return name + "Protos"
	}
	return "Proto" + name
}
