// Package statemachine holds the answer of generated CanTransit<Enum>
// functions. It lives in the runtime, not in generated code, so that every
// package of generated code shares one type however its files were
// generated (protoc one file at a time, buf per directory).
package statemachine

// Transit is whether an entity may move from one state to another. The
// strings are the same in Go, Java and Python.
type Transit string

const (
	// Allowed: from is a listed predecessor of to.
	Allowed Transit = "ALLOWED"
	// Duplicate: from == to; the work was already done, succeed quietly.
	Duplicate Transit = "DUPLICATE"
	// Illegal: anything else, unknown states included; out of order or
	// dirty data, alert.
	Illegal Transit = "ILLEGAL"
)
