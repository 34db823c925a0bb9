package python

import (
	"fmt"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/msgcontract/msgcontract/codegen/model"
)

// RuleKeyword is the lint rule of a name protoc's Python output cannot
// hold.
const RuleKeyword = "PYTHON_KEYWORD_NAME"

// Check reports, positioned, the enum values and the message and enum
// names of contract files that are Python keywords: protoc's .pyi stub
// then declares "None: Kind" or "class from", which is a syntax error,
// so mypy can check nothing that imports the module. (Fields named like
// keywords are fine: protoc leaves them out of the stub and generated
// code reads them with getattr.) The linter calls it.
func Check(set *model.Set) model.Diagnostics {
	var ds model.Diagnostics
	report := func(d protoreflect.Descriptor, what string) {
		ds = append(ds, model.Diagnostic{Pos: set.Position(d), Rule: RuleKeyword, Message: fmt.Sprintf(
			"%s %s is a Python keyword; protoc's Python stub (.pyi) for this file would not parse, so mypy cannot check code using it; rename it (e.g. %s_)",
			what, d.Name(), d.Name())})
	}
	var enums func(protoreflect.EnumDescriptors)
	enums = func(es protoreflect.EnumDescriptors) {
		for i := 0; i < es.Len(); i++ {
			e := es.Get(i)
			if keywords[string(e.Name())] && e.Name() != "print" {
				report(e, "enum")
			}
			for j := 0; j < e.Values().Len(); j++ {
				if v := e.Values().Get(j); keywords[string(v.Name())] && v.Name() != "print" {
					report(v, "enum value")
				}
			}
		}
	}
	var msgs func(protoreflect.MessageDescriptors)
	msgs = func(ms protoreflect.MessageDescriptors) {
		for i := 0; i < ms.Len(); i++ {
			m := ms.Get(i)
			if keywords[string(m.Name())] && m.Name() != "print" {
				report(m, "message")
			}
			enums(m.Enums())
			msgs(m.Messages())
		}
	}
	for _, f := range set.Files {
		if !f.HasContract() {
			continue
		}
		enums(f.Desc.Enums())
		msgs(f.Desc.Messages())
	}
	return ds
}
