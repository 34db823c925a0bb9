// Package model is msgcontract's resolved contract model: .proto files
// compiled with protocompile, their msgcontract options read, checked
// against DESIGN.md's rules and resolved into events, biz_key templates,
// effective retry policies, error ranges and state machines. Every emitter,
// the linter and the registry's contract checks read this one model.
package model

import (
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/msgcontract/msgcontract/runtime-go/backoff"
	"github.com/msgcontract/msgcontract/runtime-go/classify"
)

// Set is the result of loading contracts.
type Set struct {
	// Files are the files named on the command line, in that order.
	Files []*File
	// Registry resolves every compiled file, imports included.
	Registry *protoregistry.Files
	// Diagnostics lists every contract-rule violation; an empty list means
	// the contracts are clean.
	Diagnostics Diagnostics
	// displayPaths maps import paths to the paths shown to users.
	displayPaths map[string]string
}

// File is one contract file.
type File struct {
	// Path is the import path, e.g. "shop/payment/v1/payment.proto".
	Path string
	// DisplayPath is the path as the user named it on disk.
	DisplayPath string
	Desc        protoreflect.FileDescriptor
	// Defaults are the file's defaults option, with built-in defaults
	// applied where the file is silent.
	Defaults      Defaults
	Events        []*Event
	StateMachines []*StateMachine
}

// Defaults are a file's effective defaults.
type Defaults struct {
	Policy backoff.Policy
	Rules  Rules
}

// Rules are error ranges with their source positions.
type Rules struct {
	Ranges                []ErrorRange
	UnclassifiedRetryable bool
}

// Classify returns the runtime's classification rules.
func (r Rules) Classify() classify.Rules {
	out := classify.Rules{UnclassifiedRetryable: r.UnclassifiedRetryable}
	for _, rg := range r.Ranges {
		out.Ranges = append(out.Ranges, rg.Range)
	}
	return out
}

// ErrorRange is a contract error range.
type ErrorRange struct {
	classify.Range
	Pos Pos
}

// Event is a message carrying the (msgcontract.v1.event) option.
type Event struct {
	Desc      protoreflect.MessageDescriptor
	File      *File
	Topic     string
	EventType string
	// BizKeyTemplate is the template as written; BizKey its resolved parts.
	BizKeyTemplate string
	BizKey         []KeyPart
	// Policy is the effective retry policy: the event's own when it has
	// one (PolicyFromEvent), the file's default otherwise.
	Policy          backoff.Policy
	PolicyFromEvent bool
	// Rules are the file's error ranges and unclassified setting.
	Rules Rules
	// TargetState is the state this event moves its entity to, or nil.
	TargetState *StateRef
	// Pos is the message declaration; OptionPos the positions of the
	// event option's fields ("topic", "event_type", "biz_key", ...).
	Pos       Pos
	OptionPos map[string]Pos
}

// Name is the message's full proto name.
func (e *Event) Name() string { return string(e.Desc.FullName()) }

// KeyPart is a literal run or a resolved placeholder of a biz_key template.
type KeyPart struct {
	Literal string
	// Fields is the path from the event message to the placeholder's
	// field; nil for a literal.
	Fields []protoreflect.FieldDescriptor
	// Path is the dotted placeholder as written.
	Path string
}

// IsPlaceholder reports whether k is a placeholder.
func (k KeyPart) IsPlaceholder() bool { return k.Fields != nil }

// Leaf is the placeholder's final field.
func (k KeyPart) Leaf() protoreflect.FieldDescriptor { return k.Fields[len(k.Fields)-1] }

// StateRef names one value of a state machine.
type StateRef struct {
	Machine *StateMachine
	Value   protoreflect.EnumValueDescriptor
}

// StateMachine is an enum carrying the (msgcontract.v1.state_machine)
// option.
type StateMachine struct {
	Desc   protoreflect.EnumDescriptor
	File   *File
	States []*State
	Pos    Pos
}

// State is one value of a state machine with its allowed predecessors.
type State struct {
	Desc protoreflect.EnumValueDescriptor
	Name string
	// From lists the values this state may be reached from.
	From []string
	Pos  Pos
	// FromPos are the positions of the From entries.
	FromPos []Pos
}

// Transit is the answer of CanTransit.
type Transit string

// CanTransit's answers, identical in every language.
const (
	// Allowed: from is a listed predecessor of to.
	Allowed Transit = "ALLOWED"
	// Duplicate: from == to; the work was already done, succeed quietly.
	Duplicate Transit = "DUPLICATE"
	// Illegal: anything else; out-of-order or dirty data, alert.
	Illegal Transit = "ILLEGAL"
)

// State returns the state named name, or nil.
func (sm *StateMachine) State(name string) *State {
	for _, s := range sm.States {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// CanTransit answers whether an entity in state from may move to state to.
// Unknown names are Illegal; from == to is Duplicate; a listed predecessor
// is Allowed; anything else is Illegal.
func (sm *StateMachine) CanTransit(from, to string) Transit {
	target, source := sm.State(to), sm.State(from)
	if target == nil || source == nil {
		return Illegal
	}
	if from == to {
		return Duplicate
	}
	for _, f := range target.From {
		if f == from {
			return Allowed
		}
	}
	return Illegal
}

// Descriptors returns the descriptors of the set's files, in order.
func (s *Set) Descriptors() []protoreflect.FileDescriptor {
	fds := make([]protoreflect.FileDescriptor, len(s.Files))
	for i, f := range s.Files {
		fds[i] = f.Desc
	}
	return fds
}

// Event returns the event whose message has the full name, or nil.
func (s *Set) Event(fullName string) *Event {
	for _, f := range s.Files {
		for _, e := range f.Events {
			if e.Name() == fullName {
				return e
			}
		}
	}
	return nil
}

// StateMachine returns the state machine whose enum has the full name, or
// nil.
func (s *Set) StateMachine(fullName string) *StateMachine {
	for _, f := range s.Files {
		for _, sm := range f.StateMachines {
			if string(sm.Desc.FullName()) == fullName {
				return sm
			}
		}
	}
	return nil
}
