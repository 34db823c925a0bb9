package golang

import (
	"fmt"
	"slices"

	"google.golang.org/protobuf/compiler/protogen"

	"github.com/msgcontract/msgcontract/codegen/emit"
	"github.com/msgcontract/msgcontract/codegen/model"
)

// RuleNameCollision is the lint rule of a generated Go identifier that
// collides with another in its Go package.
const RuleNameCollision = "GO_NAME_COLLISION"

// Check reports, positioned at the contract element, every package-level
// Go identifier the generator would declare that collides with one
// protoc-gen-go declares in the same Go package (types, enum values,
// oneof wrappers, <Enum>_name/_value) or with another generated one. The
// linter calls it, so a contract Go cannot represent is rejected by lint,
// not by the compiler. When the Go packages cannot be resolved (a file
// without go_package) there is nothing to check; generation reports that.
func Check(set *model.Set) model.Diagnostics {
	plugin, err := Plugin(set, emit.Params{})
	if err != nil {
		return nil
	}
	return check(set, plugin)
}

// check is Check against one Go view of set. Lint and Prepare (for Go,
// in one run, often with the same view) share its findings.
func check(set *model.Set, plugin *protogen.Plugin) model.Diagnostics {
	v, _ := set.Memo(checkKey{plugin}, func() (any, error) { return checkView(set, plugin), nil })
	return slices.Clone(v.(model.Diagnostics))
}

// checkKey is the set's memo key of check's findings for a Go view.
type checkKey struct{ plugin *protogen.Plugin }

func checkView(set *model.Set, plugin *protogen.Plugin) model.Diagnostics {
	pkgs, clashes := newPackages(set, plugin)
	var ds model.Diagnostics
	named := map[string]bool{}
	for _, f := range set.Files {
		named[f.Path] = true
	}
	for _, c := range clashes {
		if !named[c.desc.ParentFile().Path()] {
			continue
		}
		ds = append(ds, model.Diagnostic{Pos: set.Position(c.desc), Rule: RuleNameCollision, Message: fmt.Sprintf(
			"protoc-gen-go gives %s and %s the same Go name %s, so the package cannot compile; rename one of them in the .proto",
			c.first, c.second, c.name)})
	}
	// claim reports the first collision of one element's names only: the
	// rest follow from the same rename.
	claim := func(pkg *goPackage, pos model.Pos, by string, names ...string) {
		for _, name := range names {
			if err := pkg.claim(name, by); err != nil {
				ds = append(ds, model.Diagnostic{Pos: pos, Rule: RuleNameCollision, Message: err.Error()})
				return
			}
		}
	}
	for _, mf := range set.Files {
		gf := plugin.FilesByPath[mf.Path]
		if gf == nil {
			continue
		}
		pkg := pkgs.of(gf)
		for _, sm := range mf.StateMachines {
			if e := findEnum(gf, sm.Desc.FullName()); e != nil {
				claim(pkg, sm.Pos, string(sm.Desc.FullName()), canTransitName(e), predecessorsName(e))
			}
		}
		for _, ev := range mf.Events {
			msg := findMessage(gf.Messages, ev.Desc.FullName())
			if msg == nil {
				continue
			}
			n := namesOf(msg)
			claim(pkg, ev.Pos, ev.Name(), n.all()...)
			if ev.TargetState != nil {
				claim(pkg, ev.Pos, ev.Name(), n.TargetState)
			}
			for _, rc := range rangeConsts(n, ev.Rules) {
				claim(pkg, rc.r.Pos, ev.Name(), rc.from, rc.to)
			}
		}
	}
	ds.Sort()
	return ds
}
