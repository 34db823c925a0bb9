// Package java emits Java code from the contract model: per contract file a
// contract class beside protoc's Java classes (biz_key rendering, the
// contract as constants, classification, state machines). The classes they
// use (backoff, percent-encoding, envelope codec, dedup SQL, the consumer
// skeleton) are the runtime library io.msgcontract:msgcontract-runtime in
// runtime-java, never copied into the output. The code is rendered from
// templates/java; naming rules live in naming.go.
package java

import (
	"fmt"
	"path"
	"strconv"
	"strings"
	"sync"
	"text/template"
	"unicode/utf8"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/msgcontract/msgcontract"
	"github.com/msgcontract/msgcontract/codegen/emit"
	"github.com/msgcontract/msgcontract/codegen/model"
	"github.com/msgcontract/msgcontract/runtime-go/backoff"
	"github.com/msgcontract/msgcontract/templates"
)

// RuntimeVersion is the oldest io.msgcontract:msgcontract-runtime the
// generated classes accept: the release that generated them
// (msgcontract.Version); each class checks it in its static initializer
// (io.msgcontract.support.Version.require).
var RuntimeVersion = msgcontract.Version

// tmpl is parsed on first use, not at start-up: every msgcontract command
// links this package, and most never render a template.
var tmpl = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("java").ParseFS(templates.FS,
		"java/header.tmpl", "java/contract.java.tmpl"))
})

// Generate renders one contract class per file of set that declares events
// or state machines.
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
		data, err := contractData(f, version)
		if err != nil {
			return nil, err
		}
		var dir string
		if p.Paths == "source_relative" {
			dir = path.Dir(f.Path)
		} else {
			dir = strings.ReplaceAll(data.Package, ".", "/")
		}
		// Lint's JAVA_CLASS_COLLISION refuses one class twice; with
		// paths=source_relative, classes of two Java packages may still
		// share a folder and a name.
		if err := outputs.Claim(path.Join(dir, data.Class+".java"), f.Path, "give them different java_outer_classname options"); err != nil {
			return nil, err
		}
		out, err := emit.Render(tmpl(), "contract.java.tmpl", data, sizeHint)
		if err != nil {
			return nil, err
		}
		files = append(files, emit.File{Name: path.Join(dir, data.Class+".java"), Content: out})
		sizeHint = len(out) + len(out)/4
	}
	return files, nil
}

type contractFile struct {
	Version, Source, Package, Class string
	DefaultRetry                    string
	RuntimeVersion                  string
	Ranges                          []errorRange
	UnclassifiedRetryable           bool
	Events                          []event
	Machines                        []machine

	// Deprecated, when set, is why the contract class is @Deprecated:
	// the file is.
	Deprecated string
}

type errorRange struct {
	From, To  int32
	Retryable bool
	Name      string
}

type event struct {
	Class, Message, FullName, Topic, EventType, Template, TemplateDoc, TargetState, Retry string
	OwnRetry                                                                              bool
	Doc                                                                                   []string
	KeyCode                                                                               []string

	// Deprecated, when set, is why the event's class is @Deprecated: its
	// message is (deprecation).
	Deprecated string
	// KeyDeprecated: bizKey calls accessors protoc marks @Deprecated,
	// outside any deprecated class, so it suppresses the warning.
	KeyDeprecated bool
}

type machine struct {
	Class, Enum, FullName string
	Doc                   []string
	States                []state
	// Aliases are the allow_alias names, in declaration order.
	Aliases []alias
	// Deprecated, when set, is why the machine's class is @Deprecated:
	// its enum is (deprecation).
	Deprecated string
}

type alias struct{ Name, Canonical string }

type state struct {
	Name string
	From []string
}

func contractData(f *model.File, version string) (*contractFile, error) {
	d := &contractFile{
		Version:               version,
		RuntimeVersion:        RuntimeVersion,
		Source:                f.Path,
		Package:               Package(f.Desc),
		Class:                 ContractClass(f.Desc),
		DefaultRetry:          policy(f.Defaults.Policy),
		UnclassifiedRetryable: f.Defaults.Rules.UnclassifiedRetryable,
	}
	if fileOptions(f.Desc).GetDeprecated() {
		d.Deprecated = docText("The contract file " + f.Path + " is deprecated.")
	}
	if d.Package == "" {
		return nil, fmt.Errorf("%s: Java classes need a package; add option java_package = \"com.example.foo\"; or a proto package", f.Path)
	}
	for _, r := range f.Defaults.Rules.Ranges {
		d.Ranges = append(d.Ranges, errorRange{From: r.From, To: r.To, Retryable: r.Retryable, Name: String(r.Name)})
	}
	eventClasses, machineClasses := nestedNames(f)
	for i, e := range f.Events {
		target := ""
		if e.TargetState != nil {
			target = string(e.TargetState.Machine.Desc.Name()) + "." + string(e.TargetState.Value.Name())
		}
		d.Events = append(d.Events, event{
			Class:       eventClasses[i],
			Message:     ClassName(e.Desc),
			FullName:    String(e.Name()),
			Topic:       String(e.Topic),
			EventType:   String(e.EventType),
			Template:    String(e.BizKeyTemplate),
			TemplateDoc: docText(e.BizKeyTemplate),
			TargetState: String(target),
			Retry:       policy(e.Policy),
			OwnRetry:    e.PolicyFromEvent,
			Doc:         doc(e.Desc, "The contract of event "+string(e.Desc.FullName())+"."),
			KeyCode:     keyCode(e),
		})
		ev := &d.Events[len(d.Events)-1]
		ev.Deprecated = deprecation(e.Desc)
		// Inside a deprecated class javac warns of no deprecated use.
		ev.KeyDeprecated = ev.Deprecated == "" && d.Deprecated == "" && keyDeprecated(e)
	}
	for i, sm := range f.StateMachines {
		m := machine{
			Class:    machineClasses[i],
			Enum:     ClassName(sm.Desc),
			FullName: String(string(sm.Desc.FullName())),
			Doc:      doc(sm.Desc, "The state machine "+string(sm.Desc.FullName())+"."),
		}
		m.Deprecated = deprecation(sm.Desc)
		for _, n := range sm.Graph() {
			st := state{Name: String(n.Name)}
			for _, from := range n.From {
				st.From = append(st.From, String(from))
			}
			m.States = append(m.States, st)
		}
		for _, a := range sm.Aliases() {
			m.Aliases = append(m.Aliases, alias{Name: String(a.Name), Canonical: String(a.Canonical)})
		}
		d.Machines = append(d.Machines, m)
	}
	return d, nil
}

// policy renders a RetryPolicy constructor call.
func policy(p backoff.Policy) string {
	return fmt.Sprintf("new RetryPolicy(%dL, %s, %dL, %dL, %d)", p.BaseMs, Double(p.Multiplier), p.JitterMs, p.MaxDelayMs, p.MaxRetries)
}

// Double renders a double literal that parses to exactly v.
func Double(v float64) string {
	s := strconv.FormatFloat(v, 'g', -1, 64)
	if !strings.ContainsAny(s, ".eE") {
		s += ".0"
	}
	return s
}

// doc returns d's leading proto comment as Javadoc lines (each starting
// with a space when non-empty), or fallback.
func doc(d protoreflect.Descriptor, fallback string) []string {
	text := strings.TrimSpace(newlines(d.ParentFile().SourceLocations().ByDescriptor(d).LeadingComments))
	if text == "" {
		text = fallback
	}
	var lines []string
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimRight(docText(l), " ")
		if l != "" && !strings.HasPrefix(l, " ") {
			l = " " + l
		}
		lines = append(lines, l)
	}
	return lines
}

// newlines turns CRLF and lone CR line ends (a .proto saved on Windows)
// into LF.
func newlines(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
}

// docText makes one line of text safe inside a Javadoc comment, whatever
// it holds: "*/" cannot end the comment, "@" cannot start a tag, and no
// backslash is left for javac's \u pre-processing (which would turn
// "\u002a/" into "*/" or "\u000a" into a line end before lexing);
// control characters, which javac may treat as line ends or reject, become
// HTML character references.
func docText(s string) string {
	var b strings.Builder
	for i, r := range s {
		switch {
		case r == '*' && strings.HasPrefix(s[i:], "*/"):
			b.WriteString("*&#47;")
		case r == '/' && i > 0 && s[i-1] == '*':
			// written with the '*' above
		case r == '@':
			b.WriteString("&#64;")
		case r == '\\':
			b.WriteString("&#92;")
		case r == '&':
			b.WriteString("&amp;")
		case r == '\t':
			b.WriteByte(' ')
		case r < 0x20 || r == 0x7f || r == 0x85 || r == 0x2028 || r == 0x2029 || r == 0xfeff || r == utf8.RuneError:
			fmt.Fprintf(&b, "&#x%x;", r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// deprecation says why protoc marks the Java class of d (an event's
// message or a state machine's enum) or a class enclosing it @Deprecated,
// or is "" when it marks none: d or a message it is nested in has option
// deprecated. The contract's class for d then is @Deprecated too, as
// idiomatic Java deprecates an API built on a deprecated one, which also
// lets it name those classes without a warning. (A deprecated file marks
// the outer class, which the contract class as a whole answers for.)
func deprecation(d protoreflect.Descriptor) string {
	for p := d; p != nil; p = p.Parent() {
		var deprecated bool
		switch o := p.Options().(type) {
		case *descriptorpb.MessageOptions:
			deprecated = o.GetDeprecated()
		case *descriptorpb.EnumOptions:
			deprecated = o.GetDeprecated()
		}
		if !deprecated {
			continue
		}
		if p == d {
			return docText("The contract's " + string(d.FullName()) + " is deprecated.")
		}
		return docText("The contract's " + string(d.FullName()) + " is nested in " + string(p.FullName()) + ", which is deprecated.")
	}
	return ""
}

// keyDeprecated reports whether e's bizKey calls an accessor protoc
// marks @Deprecated: one of a field with option deprecated on a
// placeholder's path. (Classes of deprecated messages and enums on the
// path are never named, so they warn nothing.)
func keyDeprecated(e *model.Event) bool {
	for _, part := range e.BizKey {
		for _, fd := range part.Fields {
			if o, ok := fd.Options().(*descriptorpb.FieldOptions); ok && o.GetDeprecated() {
				return true
			}
		}
	}
	return false
}

// keyCode returns the statements that feed template parts into builder b
// from message m, in template order.
func keyCode(e *model.Event) []string {
	var lines []string
	for _, part := range e.BizKey {
		if !part.IsPlaceholder() {
			lines = append(lines, "b.literal("+String(part.Literal)+");")
			continue
		}
		var conds []string
		expr := "m"
		for _, fd := range part.Fields[:len(part.Fields)-1] {
			conds = append(conds, expr+".has"+accessorBase(fd)+"()")
			expr += ".get" + accessorBase(fd) + "()"
		}
		leaf := part.Leaf()
		if leaf.HasPresence() {
			conds = append(conds, expr+".has"+accessorBase(leaf)+"()")
		}
		appendStmt := valueStmt(part.Path, expr, leaf)
		if len(conds) == 0 {
			lines = append(lines, appendStmt)
			continue
		}
		lines = append(lines,
			"if ("+strings.Join(conds, " && ")+") {",
			"  "+appendStmt,
			"} else {",
			"  b.fail("+String(part.Path)+");",
			"}")
	}
	return lines
}

// valueStmt appends the value of field fd of the message expression owner.
func valueStmt(fieldPath, owner string, fd protoreflect.FieldDescriptor) string {
	get := owner + ".get" + accessorBase(fd) + "()"
	switch fd.Kind() {
	case protoreflect.StringKind:
		return "b.string(" + String(fieldPath) + ", " + get + ");"
	case protoreflect.BoolKind:
		return "b.bool(" + get + ");"
	case protoreflect.EnumKind:
		enumType := owner + ".getDescriptorForType().findFieldByNumber(" + strconv.Itoa(int(fd.Number())) + ").getEnumType()"
		if fd.Enum().IsClosed() {
			return "b.enumValue(" + enumType + ", " + get + ".getNumber());"
		}
		return "b.enumValue(" + enumType + ", " + owner + ".get" + accessorBase(fd) + "Value());"
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return "b.unsigned32(" + get + ");"
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return "b.unsigned64(" + get + ");"
	default: // every signed integer kind
		return "b.integer(" + get + ");"
	}
}
