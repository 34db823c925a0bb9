package golang

import (
	"fmt"
	"slices"

	"github.com/dave/jennifer/jen"
	"google.golang.org/protobuf/compiler/protogen"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/msgcontract/msgcontract/codegen/model"
)

// stateMachine renders the machine as data, predecessors<Enum> (every
// state by number mapped to its predecessors), and CanTransit<Enum>, which
// hands the table to runtime-go's statemachine.CanTransit: the rule lives
// in the runtime once, as in Java and Python.
func (g *fileGen) stateMachine(f *jen.File, sm *model.StateMachine) error {
	e := g.enum(sm.Desc)
	if e == nil {
		return fmt.Errorf("state machine %s: enum not found", sm.Desc.FullName())
	}
	name, table := canTransitName(e), predecessorsName(e)
	// Values by number: aliases (allow_alias) are one state, as DESIGN.md
	// defines; the first declared name stands for the number.
	values := map[protoreflect.EnumNumber]*protogen.EnumValue{}
	var numbers []protoreflect.EnumNumber
	for _, v := range e.Values {
		if _, ok := values[v.Desc.Number()]; !ok {
			values[v.Desc.Number()] = v
			numbers = append(numbers, v.Desc.Number())
		}
	}
	// Predecessors of each number, in declaration order; transitions
	// declared on several aliases of one number are merged.
	preds := map[protoreflect.EnumNumber][]protoreflect.EnumNumber{}
	for _, st := range sm.States {
		to := st.Desc.Number()
		for _, from := range st.From {
			fv := sm.Desc.Values().ByName(protoreflect.Name(from))
			if fv == nil || slices.Contains(preds[to], fv.Number()) || fv.Number() == to {
				continue
			}
			preds[to] = append(preds[to], fv.Number())
		}
	}
	id := func(n protoreflect.EnumNumber) jen.Code { return jen.Id(values[n].GoIdent.GoName) }
	var entries []jen.Code
	for _, n := range numbers {
		var froms []jen.Code
		for _, from := range preds[n] {
			froms = append(froms, id(from))
		}
		val := jen.Nil()
		if len(froms) > 0 {
			val = jen.Values(froms...)
		}
		entries = append(entries, jen.Add(id(n)).Op(":").Add(val))
	}
	enumType := e.GoIdent.GoName
	f.Add(comment(fmt.Sprintf(`%s is the state machine %s as data: every %s (by number; allow_alias
names of one number are one state) mapped to the states it may be reached from.`, table, sm.Desc.FullName(), enumType)))
	f.Var().Id(table).Op("=").Map(jen.Id(enumType)).Index().Id(enumType).Custom(multi, entries...)
	f.Add(docComment(fmt.Sprintf(`%s says whether an entity may move from one %s to another:
statemachine.Allowed, statemachine.Duplicate (from == to) or statemachine.Illegal.`, name, enumType), leadingComments(sm.Desc)))
	f.Func().Id(name).Params(jen.List(jen.Id("from"), jen.Id("to")).Id(enumType)).Qual(pkgStateMachine, "Transit").Block(
		jen.Return(jen.Qual(pkgStateMachine, "CanTransit").Call(jen.Id(table), jen.Id("from"), jen.Id("to"))),
	)
	return nil
}
