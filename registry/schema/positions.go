package schema

import "github.com/msgcontract/msgcontract/codegen/model"

// positions are the source positions of a file's contract elements that
// the model finds in the syntax tree: option fields, error ranges, state
// machines and their states. A model built from descriptors (what a
// worker sends back) has only source info, which places them at their
// declarations; these put violations back on the line that changed.
type positions struct {
	Events   []eventPositions
	Ranges   []model.Pos
	Machines []machinePositions
}

type eventPositions struct {
	Pos       model.Pos
	OptionPos map[string]model.Pos
}

type machinePositions struct {
	Pos    model.Pos
	States []statePositions
}

type statePositions struct {
	Pos     model.Pos
	FromPos []model.Pos
}

func positionsOf(f *model.File) *positions {
	ps := &positions{}
	for _, e := range f.Events {
		ps.Events = append(ps.Events, eventPositions{Pos: e.Pos, OptionPos: e.OptionPos})
	}
	for _, r := range f.Defaults.Rules.Ranges {
		ps.Ranges = append(ps.Ranges, r.Pos)
	}
	for _, sm := range f.StateMachines {
		mp := machinePositions{Pos: sm.Pos}
		for _, s := range sm.States {
			mp.States = append(mp.States, statePositions{Pos: s.Pos, FromPos: s.FromPos})
		}
		ps.Machines = append(ps.Machines, mp)
	}
	return ps
}

// apply sets the positions on f, a model of the same file built from its
// descriptor: the same elements in the same order. Where the shapes
// differ (they never should), f keeps its own.
func (ps *positions) apply(f *model.File) {
	if ps == nil {
		return
	}
	if len(ps.Events) == len(f.Events) {
		for i, e := range f.Events {
			e.Pos, e.OptionPos = ps.Events[i].Pos, ps.Events[i].OptionPos
			if e.OptionPos == nil {
				e.OptionPos = map[string]model.Pos{}
			}
		}
	}
	if len(ps.Ranges) == len(f.Defaults.Rules.Ranges) {
		// Events share the file's range slice, so this places theirs too.
		for i := range f.Defaults.Rules.Ranges {
			f.Defaults.Rules.Ranges[i].Pos = ps.Ranges[i]
		}
	}
	if len(ps.Machines) == len(f.StateMachines) {
		for i, sm := range f.StateMachines {
			mp := ps.Machines[i]
			sm.Pos = mp.Pos
			if len(mp.States) != len(sm.States) {
				continue
			}
			for j, s := range sm.States {
				s.Pos = mp.States[j].Pos
				if len(mp.States[j].FromPos) == len(s.FromPos) {
					s.FromPos = mp.States[j].FromPos
				}
			}
		}
	}
}
