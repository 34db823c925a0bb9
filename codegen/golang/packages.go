package golang

import (
	"fmt"

	"google.golang.org/protobuf/compiler/protogen"

	"github.com/msgcontract/msgcontract/codegen/model"
)

// goPackage is what the files generated into one Go package share.
type goPackage struct {
	// taken maps package-level identifiers protoc-gen-go declares to the
	// proto element declaring them, for collision errors.
	taken map[string]string
}

type packages map[protogen.GoImportPath]*goPackage

func newPackages(set *model.Set, plugin *protogen.Plugin) packages {
	ps := packages{}
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
		declared(p.taken, gf.Enums, gf.Messages)
	}
	return ps
}

func (ps packages) of(f *protogen.File) *goPackage { return ps[f.GoImportPath] }

// declared records the identifiers protoc-gen-go declares for enums and
// messages (recursively): types, enum values, oneof wrappers and the
// <Enum>_name/_value maps.
func declared(taken map[string]string, enums []*protogen.Enum, msgs []*protogen.Message) {
	for _, e := range enums {
		full := string(e.Desc.FullName())
		taken[e.GoIdent.GoName] = full
		taken[e.GoIdent.GoName+"_name"] = full
		taken[e.GoIdent.GoName+"_value"] = full
		for _, v := range e.Values {
			taken[v.GoIdent.GoName] = string(v.Desc.FullName())
		}
	}
	for _, m := range msgs {
		taken[m.GoIdent.GoName] = string(m.Desc.FullName())
		for _, f := range m.Fields {
			if f.Oneof != nil && !f.Oneof.Desc.IsSynthetic() {
				taken[f.GoIdent.GoName] = string(f.Desc.FullName())
			}
		}
		declared(taken, m.Enums, m.Messages)
	}
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
