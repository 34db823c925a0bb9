package statemachine

import "slices"

// CanTransit decides whether an entity in state from may move to state to,
// from a machine written as data: predecessors has one key per known
// state (by number, so allow_alias names of one number are one state),
// mapped to the states it may be reached from. Generated
// CanTransit<Enum> functions call it with their enum's table, so the rule
// itself lives here once, as Java's StateMachine and Python's
// StateMachine hold it in their languages:
//
//   - a state that is not a key (an unknown number) is Illegal;
//   - from == to is Duplicate: the work was already done, succeed quietly;
//   - from listed among to's predecessors is Allowed;
//   - anything else is Illegal.
func CanTransit[S comparable](predecessors map[S][]S, from, to S) Transit {
	preds, known := predecessors[to]
	if _, fromKnown := predecessors[from]; !known || !fromKnown {
		return Illegal
	}
	if from == to {
		return Duplicate
	}
	if slices.Contains(preds, from) {
		return Allowed
	}
	return Illegal
}
