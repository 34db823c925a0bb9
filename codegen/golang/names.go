package golang

import (
	"strconv"
	"strings"
	"unicode"

	"google.golang.org/protobuf/compiler/protogen"

	"github.com/msgcontract/msgcontract/codegen/model"
)

// Import paths of the runtime packages generated code calls.
const (
	runtimeModule   = "github.com/msgcontract/msgcontract/runtime-go"
	pkgBizkey       = runtimeModule + "/bizkey"
	pkgEvent        = runtimeModule + "/event"
	pkgStateMachine = runtimeModule + "/statemachine"
	pkgClassify     = runtimeModule + "/classify"
	pkgBackoff      = runtimeModule + "/backoff"
	pkgEnvelopepb   = runtimeModule + "/envelopepb"
	pkgTransport    = runtimeModule + "/transport"
	pkgConsumer     = runtimeModule + "/consumer"
	pkgOutbox       = runtimeModule + "/outbox"
	pkgContext      = "context"
	pkgSQL          = "database/sql"
)

// importNames are the names of the packages generated code imports by
// their own name, without an alias; writer.pkg names any other package.
var importNames = map[string]string{
	pkgBizkey:     "bizkey",
	pkgEvent:      "event",
	pkgClassify:   "classify",
	pkgBackoff:    "backoff",
	pkgEnvelopepb: "envelopepb",
	pkgTransport:  "transport",
	pkgConsumer:   "consumer",
	pkgOutbox:     "outbox",
	pkgContext:    "context",
	pkgSQL:        "sql",
}

// eventNames are the package-level identifiers generated for one event.
// Every generated name is built here, so naming and escaping live in one
// place.
type eventNames struct {
	Msg         protogen.GoIdent // the message type, from protoc-gen-go
	Spec        string           // <Event>Spec
	TargetState string           // <Event>TargetState
	Classify    string           // Classify<Event>
	Envelope    string           // New<Event>Envelope
	Publish     string           // Publish<Event>
	Outbox      string           // Write<Event>ToOutbox
	Handler     string           // <Event>Handler
	Register    string           // Register<Event>Handler
}

func namesOf(m *protogen.Message) eventNames {
	n := m.GoIdent.GoName
	return eventNames{
		Msg:         m.GoIdent,
		Spec:        n + "Spec",
		TargetState: n + "TargetState",
		Classify:    "Classify" + n,
		Envelope:    "New" + n + "Envelope",
		Publish:     "Publish" + n,
		Outbox:      "Write" + n + "ToOutbox",
		Handler:     n + "Handler",
		Register:    "Register" + n + "Handler",
	}
}

// all lists the names for collision checks.
func (n eventNames) all() []string {
	return []string{n.Spec, n.Classify, n.Envelope, n.Publish, n.Outbox, n.Handler, n.Register}
}

// BizKeyMethod is the name of the generated method rendering m's biz_key:
// BizKey, with "_" appended while a field or oneof of m already has that Go
// name (a field biz_key is Go field BizKey), as protoc-gen-go itself
// appends "_" to names that would clash with its generated methods.
func BizKeyMethod(m *protogen.Message) string {
	taken := map[string]bool{}
	for _, f := range m.Fields {
		taken[f.GoName] = true
	}
	for _, o := range m.Oneofs {
		taken[o.GoName] = true
	}
	name := "BizKey"
	for taken[name] {
		name += "_"
	}
	return name
}

func canTransitName(e *protogen.Enum) string { return "CanTransit" + e.GoIdent.GoName }

// predecessorsName is the unexported table of a state machine; protoc-gen-go
// declares no unexported package-level name with this prefix.
func predecessorsName(e *protogen.Enum) string { return "predecessors" + e.GoIdent.GoName }

type rangeConst struct {
	from, to string
	r        model.ErrorRange
}

// rangeConsts names the From/To constants of each error range; ranges
// whose names reduce to the same identifier are told apart by their index,
// then by "_" until unique.
func rangeConsts(n eventNames, rules model.Rules) []rangeConst {
	seen := map[string]bool{}
	var out []rangeConst
	for i, r := range rules.Ranges {
		base := n.Msg.GoName + rangeIdent(r.Name)
		if seen[base] {
			base += strconv.Itoa(i)
		}
		for seen[base] { // "a", "A" and "a1" all reduce to A1 by now
			base += "_"
		}
		seen[base] = true
		out = append(out, rangeConst{from: base + "From", to: base + "To", r: r})
	}
	return out
}

// rangeIdent turns an error range's free-text name ("system", "5xx",
// "rate-limit", "ü", "type") into an exported identifier fragment: the
// letters and digits of each word, each word capitalised. Non-ASCII
// letters are kept (Go allows them) and a name with no usable character
// becomes "Range". It is always appended to an event name, so it can
// neither start the identifier with a digit nor be a keyword.
func rangeIdent(name string) string {
	var b strings.Builder
	upper := true
	for _, r := range name {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			upper = true
			continue
		}
		if upper {
			r = unicode.ToUpper(r)
			upper = false
		}
		b.WriteRune(r)
	}
	if b.Len() == 0 {
		return "Range"
	}
	return b.String()
}
