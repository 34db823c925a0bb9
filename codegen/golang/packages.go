package golang

import (
	"fmt"

	"google.golang.org/protobuf/compiler/protogen"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/msgcontract/msgcontract/codegen/model"
)

// goPackage is what the files generated into one Go package share.
type goPackage struct {
	// taken maps package-level identifiers protoc-gen-go declares to the
	// proto element declaring them, for collision errors.
	taken map[string]string
}

type packages map[protogen.GoImportPath]*goPackage

// clash is one Go name protoc-gen-go gives two proto elements of a package;
// its own output would not compile.
type clash struct {
	name, first, second string
	desc                protoreflect.Descriptor
}

func newPackages(set *model.Set, plugin *protogen.Plugin) (packages, []clash) {
	ps := packages{}
	var clashes []clash
	for _, mf := range set.Files {
		gf := plugin.FilesByPath[mf.Path]
		if gf == nil {
			continue
		}
		p := ps[gf.GoImportPath]
		if p == nil {
			p = &goPackage{taken: map[string]string{}}
			ps[gf.GoImportPath] = p
		}
		clashes = append(clashes, declared(p.taken, gf.Enums, gf.Messages)...)
	}
	return ps, clashes
}

func (ps packages) of(f *protogen.File) *goPackage { return ps[f.GoImportPath] }

// declared records the identifiers protoc-gen-go declares for enums and
// messages (recursively): types, enum values, oneof wrappers and the
// <Enum>_name/_value maps. Names it gives two elements are returned.
func declared(taken map[string]string, enums []*protogen.Enum, msgs []*protogen.Message) []clash {
	var clashes []clash
	take := func(name string, d protoreflect.Descriptor) {
		full := string(d.FullName())
		if other, ok := taken[name]; ok && other != full {
			clashes = append(clashes, clash{name: name, first: other, second: full, desc: d})
			return
		}
		taken[name] = full
	}
	for _, e := range enums {
		take(e.GoIdent.GoName, e.Desc)
		take(e.GoIdent.GoName+"_name", e.Desc)
		take(e.GoIdent.GoName+"_value", e.Desc)
		for _, v := range e.Values {
			take(v.GoIdent.GoName, v.Desc)
		}
	}
	for _, m := range msgs {
		take(m.GoIdent.GoName, m.Desc)
		for _, f := range m.Fields {
			if f.Oneof != nil && !f.Oneof.Desc.IsSynthetic() {
				take(f.GoIdent.GoName, f.Desc)
			}
		}
		clashes = append(clashes, declared(taken, m.Enums, m.Messages)...)
	}
	return clashes
}

// claim records a generated identifier, or reports an error when it
// collides with one protoc-gen-go or an earlier generated symbol declares
// in the same package.
func (p *goPackage) claim(name, by string) error {
	if other, ok := p.taken[name]; ok {
		return fmt.Errorf("generated Go identifier %s for %s collides with the Go name of %s in the same Go package; rename one of them in the .proto", name, by, other)
	}
	p.taken[name] = by
	return nil
}
