package java

import (
	"fmt"
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"

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

// Check reports, positioned, contracts whose Java protoc itself cannot
// represent: an outer class name (from the file name) that is no Java
// identifier, as for 2fa.proto, whose classes protoc would put in a class
// "2Fa"; a field whose accessor clashes with a static method of every
// message (a field "descriptor" gets getDescriptor()). The linter calls it, so such a file is rejected with
// the fix instead of failing in javac.
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
	return ds
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
