package golang

import (
	"fmt"
	"slices"
	"strings"

	"google.golang.org/protobuf/compiler/protogen"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/msgcontract/msgcontract/codegen/model"
)

// stateMachine renders the machine as data, predecessors<Enum> (every
// state by number mapped to its predecessors), and CanTransit<Enum>, which
// hands the table to runtime-go's statemachine.CanTransit: the rule lives
// in the runtime once, as in Java and Python.
func (g *fileGen) stateMachine(w *writer, sm *model.StateMachine) error {
	e, states, preds, err := g.machine(sm)
	if err != nil {
		return err
	}
	name, table := canTransitName(e), predecessorsName(e)
	keys := make([]string, len(states))
	vals := make([]string, len(states))
	for i, st := range states {
		keys[i], vals[i] = st.GoIdent.GoName, "nil"
		if len(preds[i]) > 0 {
			froms := make([]string, len(preds[i]))
			for j, from := range preds[i] {
				froms[j] = from.GoIdent.GoName
			}
			vals[i] = "{" + strings.Join(froms, ", ") + "}"
		}
	}
	enumType := e.GoIdent.GoName
	w.doc(wrap(fmt.Sprintf(`%s is the state machine %s as data: every %s (by number; allow_alias
names of one number are one state) mapped to the states it may be reached from.`, table, sm.Desc.FullName(), enumType)))
	w.s("var ", table, " = map[", enumType, "][]", enumType, "{\n")
	w.keyValues("\t", keys, vals)
	w.s("}\n")
	w.doc(docComment(fmt.Sprintf(`%s says whether an entity may move from one %s to another:
statemachine.Allowed, statemachine.Duplicate (from == to) or statemachine.Illegal.`, name, enumType), leadingComments(sm.Desc, e.Comments)))
	w.s("func ", name, "(from, to ", enumType, ") ", w.qual(pkgStateMachine, "Transit"), " {\n",
		"\treturn ", w.qual(pkgStateMachine, "CanTransit"), "(", table, ", from, to)\n",
		"}\n")
	return nil
}

// machine is the table of a state machine: its enum, its states (one
// value per number: aliases (allow_alias) are one state, as DESIGN.md
// defines, and the first declared name stands for the number) and the
// predecessors of each state, in declaration order; transitions declared
// on several aliases of one number are merged.
func (g *fileGen) machine(sm *model.StateMachine) (*protogen.Enum, []*protogen.EnumValue, [][]*protogen.EnumValue, error) {
	e := g.enum(sm.Desc)
	if e == nil {
		return nil, nil, nil, fmt.Errorf("state machine %s: enum not found", sm.Desc.FullName())
	}
	values := map[protoreflect.EnumNumber]*protogen.EnumValue{}
	var states []*protogen.EnumValue
	for _, v := range e.Values {
		if _, ok := values[v.Desc.Number()]; !ok {
			values[v.Desc.Number()] = v
			states = append(states, v)
		}
	}
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
	out := make([][]*protogen.EnumValue, len(states))
	for i, st := range states {
		for _, n := range preds[st.Desc.Number()] {
			out[i] = append(out[i], values[n])
		}
	}
	return e, states, out, nil
}
