package python

import (
	"fmt"
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/msgcontract/msgcontract/codegen/model"
)

// RuleKeyword is the lint rule of a name protoc's Python output cannot
// hold.
const RuleKeyword = "PYTHON_KEYWORD_NAME"

// RuleModuleCollision is the lint rule of a contract file whose Python
// module another file of the build is too.
const RuleModuleCollision = "PYTHON_MODULE_COLLISION"

// Check reports, positioned, the enum values and the message and enum
// names of contract files that are Python keywords: protoc's .pyi stub
// then declares "None: Kind" or "class from", which is a syntax error,
// so mypy can check nothing that imports the module. (Fields named like
// keywords are fine: protoc leaves them out of the stub and generated
// code reads them with getattr.) It also reports contract files whose
// module another file is (moduleCollisions). The linter, generate and
// the plugin call it.
func Check(set *model.Set) model.Diagnostics {
	var ds model.Diagnostics
	report := func(d protoreflect.Descriptor, what string) {
		ds = append(ds, model.Diagnostic{Pos: set.Position(d), Rule: RuleKeyword, Message: fmt.Sprintf(
			"%s %s is a Python keyword; protoc's Python stub (.pyi) for this file would not parse, so mypy cannot check code using it; rename it (e.g. %s_)",
			what, d.Name(), d.Name())})
	}
	enums := func(es protoreflect.EnumDescriptors) {
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
	return append(ds, moduleCollisions(set)...)
}

// moduleCollisions reports each contract file whose Python module path is
// another file's: protoc turns "-" into "_", so shop/order-v1.proto and
// shop/order_v1.proto are both shop.order_v1, and their _pb2 and
// _msgcontract modules would be written over each other. A pair of
// contract files is reported once, at the later; a contract file and a
// plain file it shares its module with (imports included), at the
// contract file. Findings point at the file (1:1): its name is the fault.
func moduleCollisions(set *model.Set) model.Diagnostics {
	var (
		ds         model.Diagnostics
		byModule   map[string][]string // every compiled file's path by module, built on first use
		contracts  = map[string]string{}
		isContract = map[string]bool{}
	)
	for _, f := range set.Files {
		if f.HasContract() {
			isContract[f.Path] = true
		}
	}
	for _, f := range set.Files {
		if !f.HasContract() {
			continue
		}
		if byModule == nil {
			byModule = map[string][]string{}
			set.Registry.RangeFiles(func(fd protoreflect.FileDescriptor) bool {
				m := ModulePath(fd.Path())
				byModule[m] = append(byModule[m], fd.Path())
				return true
			})
		}
		module := ModulePath(f.Path)
		var others []string
		if first, ok := contracts[module]; ok {
			others = []string{first}
		} else {
			contracts[module] = f.Path
			for _, p := range byModule[module] {
				if !isContract[p] {
					others = append(others, p)
				}
			}
		}
		if len(others) == 0 {
			continue
		}
		ds = append(ds, model.Diagnostic{Pos: model.Pos{File: f.DisplayPath, Line: 1, Col: 1}, Rule: RuleModuleCollision, Message: fmt.Sprintf(
			"this file and %s are both the Python module %s (protoc turns \"-\" in file names into \"_\"), so %s and %s would be written over each other; rename one of the files",
			strings.Join(others, " and "), module, OutputPath(module, "_pb2"), OutputPath(module, "_msgcontract"))})
	}
	return ds
}
