package golang

import (
	"fmt"
	"sort"

	"github.com/dave/jennifer/jen"
	"google.golang.org/protobuf/compiler/protogen"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/msgcontract/msgcontract/codegen/model"
)

// stateMachine renders CanTransit<Enum>.
func (g *fileGen) stateMachine(f *jen.File, sm *model.StateMachine) error {
	e := g.enum(sm.Desc)
	if e == nil {
		return fmt.Errorf("state machine %s: enum not found", sm.Desc.FullName())
	}
	if err := g.pkg.claim(canTransitName(e), string(sm.Desc.FullName())); err != nil {
		return err
	}
	// Values by number: aliases (allow_alias) share one case.
	values := map[protoreflect.EnumNumber]*protogen.EnumValue{}
	var numbers []protoreflect.EnumNumber
	for _, v := range e.Values {
		if _, ok := values[v.Desc.Number()]; !ok {
			values[v.Desc.Number()] = v
			numbers = append(numbers, v.Desc.Number())
		}
	}
	// Predecessors of each target, by number, in declaration order.
	preds := map[protoreflect.EnumNumber][]protoreflect.EnumNumber{}
	for _, st := range sm.States {
		to := st.Desc.Number()
		for _, from := range st.From {
			fv := sm.Desc.Values().ByName(protoreflect.Name(from))
			if fv == nil || contains(preds[to], fv.Number()) || fv.Number() == to {
				continue
			}
			preds[to] = append(preds[to], fv.Number())
		}
	}
	id := func(n protoreflect.EnumNumber) jen.Code { return jen.Id(values[n].GoIdent.GoName) }
	var known []jen.Code
	for _, n := range numbers {
		known = append(known, id(n))
	}
	var cases []jen.Code
	targets := make([]protoreflect.EnumNumber, 0, len(preds))
	for n := range preds {
		targets = append(targets, n)
	}
	sort.Slice(targets, func(i, j int) bool { return indexOf(numbers, targets[i]) < indexOf(numbers, targets[j]) })
	for _, to := range targets {
		var froms []jen.Code
		for _, from := range preds[to] {
			froms = append(froms, id(from))
		}
		cases = append(cases, jen.Case(id(to)).Block(
			jen.Switch(jen.Id("from")).Block(
				jen.Case(froms...).Block(jen.Return(jen.Qual(pkgStateMachine, "Allowed"))),
			),
		))
	}
	name := canTransitName(e)
	f.Add(docComment(fmt.Sprintf(`%s says whether an entity may move from one %s to another:
statemachine.Allowed, statemachine.Duplicate (from == to) or statemachine.Illegal.`, name, e.GoIdent.GoName), leadingComments(sm.Desc)))
	body := []jen.Code{
		jen.For(jen.List(jen.Id("_"), jen.Id("s")).Op(":=").Range().Index().Id(e.GoIdent.GoName).Values(jen.Id("from"), jen.Id("to"))).Block(
			jen.Switch(jen.Id("s")).Block(
				jen.Case(known...),
				jen.Default().Block(jen.Return(jen.Qual(pkgStateMachine, "Illegal"))),
			),
		),
		jen.If(jen.Id("from").Op("==").Id("to")).Block(jen.Return(jen.Qual(pkgStateMachine, "Duplicate"))),
	}
	if len(cases) > 0 {
		body = append(body, jen.Switch(jen.Id("to")).Block(cases...))
	}
	body = append(body, jen.Return(jen.Qual(pkgStateMachine, "Illegal")))
	f.Func().Id(name).Params(jen.List(jen.Id("from"), jen.Id("to")).Id(e.GoIdent.GoName)).Qual(pkgStateMachine, "Transit").Block(body...)
	return nil
}

func contains(ns []protoreflect.EnumNumber, n protoreflect.EnumNumber) bool {
	return indexOf(ns, n) >= 0
}

func indexOf(ns []protoreflect.EnumNumber, n protoreflect.EnumNumber) int {
	for i, x := range ns {
		if x == n {
			return i
		}
	}
	return -1
}
