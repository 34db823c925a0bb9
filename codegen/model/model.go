// Package model is msgcontract's resolved contract model: .proto files
// compiled with protocompile, their msgcontract options read, checked
// against DESIGN.md's rules and resolved into events, biz_key templates,
// effective retry policies, error ranges and state machines. Every emitter,
// the linter and the registry's contract checks read this one model.
package model

import (
	"slices"
	"sync"

	"github.com/msgcontract/msgcontract/third_party/protocompile/linker"
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
	// imported are the files the named ones import, directly or not,
	// modelled for cross-file references; nothing is generated for them.
	imported []*File
	// memo holds what emitters derive from the set once and share, see
	// Memo.
	memoMu sync.Mutex
	memo   map[any]any
}

// Memo returns the value build returns for key, calling build once per
// set and key: lint and generation share what they derive from the
// same files (such as protogen's Go view of them) instead of deriving it
// twice. Values must not be changed by their users; an error is not
// remembered.
func (s *Set) Memo(key any, build func() (any, error)) (any, error) {
	s.memoMu.Lock()
	defer s.memoMu.Unlock()
	if v, ok := s.memo[key]; ok {
		return v, nil
	}
	v, err := build()
	if err != nil {
		return nil, err
	}
	if s.memo == nil {
		s.memo = map[any]any{}
	}
	s.memo[key] = v
	return v, nil
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

// HasContract reports whether the file declares events or state machines:
// the files every language emits (and lints) contract code for. A file
// without either is plain protobuf, left to protoc's generators.
func (f *File) HasContract() bool {
	return len(f.Events) > 0 || len(f.StateMachines) > 0
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

// Canonical is the name standing for name's number: the first value
// declared with that number (under allow_alias several names share one),
// as protoc's Java enums and protoreflect's ByNumber answer. It is "" for
// an unknown name.
func (sm *StateMachine) Canonical(name string) string {
	v := sm.Desc.Values().ByName(protoreflect.Name(name))
	if v == nil {
		return ""
	}
	return string(sm.Desc.Values().ByNumber(v.Number()).Name())
}

// Node is one state of a machine by number: its canonical name and the
// canonical names of the states it may be reached from.
type Node struct {
	Name string
	From []string
}

// Graph is the machine by number, as every language's generated code
// declares it: one node per number in declaration order, transitions
// declared on any alias of a number merged, a state never its own
// predecessor (from == to is DUPLICATE).
func (sm *StateMachine) Graph() []Node {
	var nodes []Node
	at := map[string]int{}
	for _, st := range sm.States {
		name := sm.Canonical(st.Name)
		i, ok := at[name]
		if !ok {
			i = len(nodes)
			at[name] = i
			nodes = append(nodes, Node{Name: name})
		}
		for _, from := range st.From {
			f := sm.Canonical(from)
			if f == "" || f == name || slices.Contains(nodes[i].From, f) {
				continue
			}
			nodes[i].From = append(nodes[i].From, f)
		}
	}
	return nodes
}

// Alias is an allow_alias name that is not canonical, with the canonical
// name of its number.
type Alias struct{ Name, Canonical string }

// Aliases lists the machine's non-canonical names in declaration order;
// none for an enum without aliases.
func (sm *StateMachine) Aliases() []Alias {
	var out []Alias
	for _, st := range sm.States {
		if c := sm.Canonical(st.Name); c != st.Name {
			out = append(out, Alias{Name: st.Name, Canonical: c})
		}
	}
	return out
}

// CanTransit answers whether an entity in state from may move to state to,
// by number (DESIGN.md): names are first mapped to their number, so
// allow_alias names of one number are one state. Unknown names are
// Illegal; the same number is Duplicate; a listed predecessor is Allowed;
// anything else is Illegal.
func (sm *StateMachine) CanTransit(from, to string) Transit {
	f, t := sm.Canonical(from), sm.Canonical(to)
	if f == "" || t == "" {
		return Illegal
	}
	if f == t {
		return Duplicate
	}
	for _, n := range sm.Graph() {
		if n.Name == t && slices.Contains(n.From, f) {
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
// nil. Machines of imported files are found too.
func (s *Set) StateMachine(fullName string) *StateMachine {
	for _, f := range append(s.Files[:len(s.Files):len(s.Files)], s.imported...) {
		for _, sm := range f.StateMachines {
			if string(sm.Desc.FullName()) == fullName {
				return sm
			}
		}
	}
	return nil
}

// Position is where d is declared, as diagnostics show it (the path the
// user named, line and column), for checks outside this package.
// d may come from another view of the same files (protogen's): it is
// looked up by name in s's registry, whose descriptors carry the source.
func (s *Set) Position(d protoreflect.Descriptor) Pos {
	if own, err := s.Registry.FindDescriptorByName(d.FullName()); err == nil {
		d = own
	}
	res, _ := d.ParentFile().(linker.Result)
	p := position(res, d)
	if shown, ok := s.displayPaths[p.File]; ok {
		p.File = shown
	}
	return p
}
