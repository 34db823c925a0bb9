package java

import (
	"fmt"
	"strings"

	"github.com/msgcontract/msgcontract/codegen/model"
)

// RuleOuterClass is the lint rule of a file whose protoc Java outer class
// would not be a Java identifier.
const RuleOuterClass = "JAVA_OUTER_CLASS"

// Check reports, positioned at the file, contracts whose Java protoc
// itself cannot represent: an outer class name (from the file name) that
// is no Java identifier, as for 2fa.proto, whose classes protoc would put
// in a class "2Fa". The linter calls it, so such a file is rejected with
// the fix instead of failing in javac.
func Check(set *model.Set) model.Diagnostics {
	var ds model.Diagnostics
	for _, f := range set.Files {
		if len(f.Events) == 0 && len(f.StateMachines) == 0 {
			continue
		}
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
