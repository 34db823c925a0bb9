// Package python emits Python code from the contract model: per contract
// file a module <name>_msgcontract.py beside protoc's <name>_pb2.py
// (biz_key rendering, the contract as constants, classification, state
// machines). What the modules share (backoff, percent-encoding, envelope
// codec, DB-API dedup claim, the consumer skeleton) is the runtime package
// msgcontract_runtime (the msgcontract-runtime distribution in
// runtime-python), imported, never copied into the output. The code is
// rendered from templates/python; naming rules live in naming.go.
package python

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"text/template"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/msgcontract/msgcontract"
	"github.com/msgcontract/msgcontract/codegen/emit"
	"github.com/msgcontract/msgcontract/codegen/model"
	"github.com/msgcontract/msgcontract/runtime-go/backoff"
	"github.com/msgcontract/msgcontract/templates"
)

// RuntimeVersion is the oldest msgcontract-runtime the generated modules
// accept: the release that generated them (msgcontract.Version); each
// module checks it at import (msgcontract_runtime.require_version).
var RuntimeVersion = msgcontract.Version

// tmpl is parsed on first use, not at start-up: every msgcontract command
// links this package, and most never render a template.
var tmpl = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("python").ParseFS(templates.FS,
		"python/header.tmpl", "python/contract.py.tmpl"))
})

// Generate renders one contract module per file of set that declares events
// or state machines. Python places modules by their .proto path whatever
// p.Paths says, as protoc's Python generator does.
func Generate(set *model.Set, p emit.Params) ([]emit.File, error) {
	version := p.HeaderVersion()
	var (
		files   []emit.File
		outputs emit.Outputs
	)
	sizeHint := 0 // files of a set are alike in size: room for the last one's
	for _, f := range set.Files {
		if !f.HasContract() {
			continue
		}
		// Lint's PYTHON_MODULE_COLLISION explains this first.
		name := OutputPath(ModulePath(f.Path), "_msgcontract")
		if err := outputs.Claim(name, f.Path, "rename one of the files"); err != nil {
			return nil, err
		}
		out, err := emit.Render(tmpl(), "contract.py.tmpl", contractData(f, version), sizeHint)
		if err != nil {
			return nil, err
		}
		files = append(files, emit.File{Name: name, Content: out})
		sizeHint = len(out) + len(out)/4
	}
	return files, nil
}

type contractFile struct {
	Version, Source, PbModule, PbImport, DefaultRetry string
	PbImportlib                                       bool // PbImport needs importlib
	RuntimeVersion                                    string
	Ranges                                            []errorRange
	UnclassifiedRetryable                             string
	Events                                            []event
	Machines                                          []machine
}

type errorRange struct {
	From, To        int32
	Retryable, Name string
}

type event struct {
	Const, Func, Message, MessageType, FullName, FullNameDoc, Topic, EventType, Template, TemplateDoc, TargetState, Retry string
	OwnRetry                                                                                                              bool
	Doc, KeyCode                                                                                                          []string
}

type machine struct {
	Const, Func, Enum, FullName string
	Doc                         []string
	States                      []state
	// Aliases are allow_alias names (Name) with their canonical name
	// (From), in declaration order.
	Aliases []state
}

type state struct{ Name, From string }

func pyBool(b bool) string {
	if b {
		return "True"
	}
	return "False"
}

func contractData(f *model.File, version string) *contractFile {
	d := &contractFile{
		Version:               version,
		RuntimeVersion:        RuntimeVersion,
		Source:                f.Path,
		PbModule:              ModulePath(f.Path) + "_pb2",
		DefaultRetry:          policy(f.Defaults.Policy),
		UnclassifiedRetryable: pyBool(f.Defaults.Rules.UnclassifiedRetryable),
	}
	d.PbImport, d.PbImportlib = pbImport(f.Path)
	for _, r := range f.Defaults.Rules.Ranges {
		d.Ranges = append(d.Ranges, errorRange{From: r.From, To: r.To, Retryable: pyBool(r.Retryable), Name: String(r.Name)})
	}
	var evDescs, smDescs []protoreflect.Descriptor
	for _, e := range f.Events {
		evDescs = append(evDescs, e.Desc)
	}
	for _, sm := range f.StateMachines {
		smDescs = append(smDescs, sm.Desc)
	}
	evNames, smNames := names(evDescs, smDescs)
	for i, e := range f.Events {
		target := ""
		if e.TargetState != nil {
			target = string(e.TargetState.Machine.Desc.Name()) + "." + string(e.TargetState.Value.Name())
		}
		d.Events = append(d.Events, event{
			Const:       evNames[i].Const,
			Func:        evNames[i].Func,
			Message:     ClassRef(e.Desc),
			MessageType: TypeRef(e.Desc),
			FullName:    String(e.Name()),
			FullNameDoc: docText(e.Name()),
			Topic:       String(e.Topic),
			EventType:   String(e.EventType),
			Template:    String(e.BizKeyTemplate),
			TemplateDoc: docText(e.BizKeyTemplate),
			TargetState: String(target),
			Retry:       policy(e.Policy),
			OwnRetry:    e.PolicyFromEvent,
			Doc:         doc(e.Desc, "The contract of event "+e.Name()+"."),
			KeyCode:     keyCode(e),
		})
	}
	for i, sm := range f.StateMachines {
		m := machine{
			Const:    smNames[i].Const,
			Func:     smNames[i].Func,
			Enum:     ClassRef(sm.Desc),
			FullName: String(string(sm.Desc.FullName())),
			Doc:      doc(sm.Desc, "The state machine "+string(sm.Desc.FullName())+"."),
		}
		for _, n := range sm.Graph() {
			var from []string
			for _, f := range n.From {
				from = append(from, String(f))
			}
			tuple := "()"
			switch len(from) {
			case 0:
			case 1:
				tuple = "(" + from[0] + ",)"
			default:
				tuple = "(" + strings.Join(from, ", ") + ")"
			}
			m.States = append(m.States, state{Name: String(n.Name), From: tuple})
		}
		for _, a := range sm.Aliases() {
			m.Aliases = append(m.Aliases, state{Name: String(a.Name), From: String(a.Canonical)})
		}
		d.Machines = append(d.Machines, m)
	}
	return d
}

func policy(p backoff.Policy) string {
	// One argument line, so that a long constant name before it cannot
	// make the line too long for linters (ruff's E501 at 120).
	return fmt.Sprintf("_mc.RetryPolicy(\n    base_ms=%d, multiplier=%s, jitter_ms=%d, max_delay_ms=%d, max_retries=%d\n)",
		p.BaseMs, Float(p.Multiplier), p.JitterMs, p.MaxDelayMs, p.MaxRetries)
}

// Float renders a float literal that parses to exactly v.
func Float(v float64) string {
	s := strconv.FormatFloat(v, 'g', -1, 64)
	if !strings.ContainsAny(s, ".eE") {
		s += ".0"
	}
	return s
}

// doc returns d's leading proto comment as docstring lines, or fallback.
func doc(d protoreflect.Descriptor, fallback string) []string {
	text := strings.TrimSpace(newlines(d.ParentFile().SourceLocations().ByDescriptor(d).LeadingComments))
	if text == "" {
		text = fallback
	}
	var lines []string
	for _, l := range strings.Split(text, "\n") {
		lines = append(lines, strings.TrimRight(docText(strings.TrimPrefix(l, " ")), " "))
	}
	return lines
}

// keyCode returns the statements that feed template parts into builder b
// from message m, in template order.
func keyCode(e *model.Event) []string {
	var lines []string
	for _, part := range e.BizKey {
		if !part.IsPlaceholder() {
			lines = append(lines, "b.literal("+String(part.Literal)+")")
			continue
		}
		var conds []string
		expr := "m"
		for _, fd := range part.Fields[:len(part.Fields)-1] {
			conds = append(conds, expr+".HasField("+String(string(fd.Name()))+")")
			expr = attr(expr, string(fd.Name()))
		}
		leaf := part.Leaf()
		if leaf.HasPresence() {
			conds = append(conds, expr+".HasField("+String(string(leaf.Name()))+")")
		}
		stmt := valueStmt(part.Path, expr, leaf)
		if len(conds) == 0 {
			lines = append(lines, stmt)
			continue
		}
		lines = append(lines,
			"if "+strings.Join(conds, " and ")+":",
			"    "+stmt,
			"else:",
			"    b.fail("+String(part.Path)+")")
	}
	return lines
}

func valueStmt(fieldPath, owner string, fd protoreflect.FieldDescriptor) string {
	get := attr(owner, string(fd.Name()))
	switch fd.Kind() {
	case protoreflect.StringKind:
		return "b.string(" + String(fieldPath) + ", " + get + ")"
	case protoreflect.BoolKind:
		return "b.boolean(" + get + ")"
	case protoreflect.EnumKind:
		return "b.enum_value(" + owner + ".DESCRIPTOR.fields_by_name[" + String(string(fd.Name())) + "], " + get + ")"
	default: // every integer kind; Python ints are exact
		return "b.integer(" + get + ")"
	}
}
