package golang

import (
	"fmt"
	"strconv"
	"strings"

	"google.golang.org/protobuf/compiler/protogen"

	"github.com/msgcontract/msgcontract/codegen/model"
)

// event renders everything generated for one event: its contract as data,
// error-code constants, classification, BizKey, producer and consumer.
func (g *fileGen) event(w *writer, ev *model.Event) error {
	msg := g.message(ev.Desc)
	if msg == nil {
		return fmt.Errorf("event %s: message not found", ev.Name())
	}
	n := namesOf(msg)
	ranges := rangeConsts(n, ev.Rules)
	g.spec(w, ev, n, msg)
	if err := g.targetState(w, ev, n); err != nil {
		return err
	}
	g.codes(w, n, ranges)
	g.classify(w, n)
	if err := g.bizKey(w, ev, msg); err != nil {
		return err
	}
	g.producer(w, ev, n, BizKeyMethod(msg))
	g.consumer(w, ev, n)
	return nil
}

// spec renders var <Event>Spec.
func (g *fileGen) spec(w *writer, ev *model.Event, n eventNames, msg *protogen.Message) {
	p := ev.Policy
	policySource := "the file's default retry policy"
	if ev.PolicyFromEvent {
		policySource = "its own retry policy"
	}
	w.doc(docComment(fmt.Sprintf(`%s is the contract of %s as data: topic %q, event
type %q, schema subject %q ("<topic>-value", Confluent's TopicNameStrategy
default), %s and error ranges. SchemaVersion is 0 (unknown) unless the
service sets it, e.g. from the schema registry at startup.`, n.Spec, msg.GoIdent.GoName, ev.Topic, ev.EventType, ev.Topic+"-value", policySource), leadingComments(ev.Desc, msg.Comments)))
	// The keys of each literal are fixed, so is their alignment.
	w.s("var ", n.Spec, " = &", w.qual(pkgEvent, "Spec"), "{\n",
		"\tFullName:  ", strconv.Quote(ev.Name()), ",\n",
		"\tTopic:     ", strconv.Quote(ev.Topic), ",\n",
		"\tEventType: ", strconv.Quote(ev.EventType), ",\n",
		"\tSubject:   ", strconv.Quote(ev.Topic+"-value"), ",\n",
		"\tPolicy: ", w.qual(pkgBackoff, "Policy"), "{\n",
		"\t\tBaseMs:     ", strconv.Itoa(int(p.BaseMs)), ",\n",
		"\t\tMultiplier: ", floatLit(p.Multiplier), ",\n",
		"\t\tJitterMs:   ", strconv.Itoa(int(p.JitterMs)), ",\n",
		"\t\tMaxDelayMs: ", strconv.Itoa(int(p.MaxDelayMs)), ",\n",
		"\t\tMaxRetries: ", strconv.Itoa(p.MaxRetries), ",\n",
		"\t},\n",
		"\tRules: ", w.qual(pkgClassify, "Rules"), "{\n")
	if len(ev.Rules.Ranges) > 0 {
		w.s("\t\tRanges: []", w.qual(pkgClassify, "Range"), "{\n")
		for _, r := range ev.Rules.Ranges {
			w.s("\t\t\t{From: ", strconv.Itoa(int(r.From)), ", To: ", strconv.Itoa(int(r.To)),
				", Retryable: ", strconv.FormatBool(r.Retryable), ", Name: ", strconv.Quote(r.Name), "},\n")
		}
		w.s("\t\t},\n")
	}
	w.s("\t\tUnclassifiedRetryable: ", strconv.FormatBool(ev.Rules.UnclassifiedRetryable), ",\n",
		"\t},\n",
		"}\n")
}

// floatLit is a float64 literal as jennifer wrote it: %#v, with ".0"
// added when that reads as an integer.
func floatLit(v float64) string {
	s := fmt.Sprintf("%#v", v)
	if !strings.Contains(s, ".") && !strings.Contains(s, "e") {
		s += ".0"
	}
	return s
}

// targetState renders <Event>TargetState for an event with a target_state.
func (g *fileGen) targetState(w *writer, ev *model.Event, n eventNames) error {
	e, value, err := g.targetValue(ev)
	if e == nil {
		return err
	}
	w.doc(wrap(fmt.Sprintf(`%s is the state a %s moves its entity to; check the move with %s.`,
		n.TargetState, n.Msg.GoName, canTransitName(e))))
	w.s("const ", n.TargetState, " = ", w.qual(string(value.GoIdent.GoImportPath), value.GoIdent.GoName), "\n")
	return nil
}

// targetValue finds the enum and value of an event's target_state, in
// whichever file of the request declares it; nil without a target_state.
func (g *fileGen) targetValue(ev *model.Event) (*protogen.Enum, *protogen.EnumValue, error) {
	if ev.TargetState == nil {
		return nil, nil, nil
	}
	ed := ev.TargetState.Machine.Desc
	gf := g.plugin.FilesByPath[ed.ParentFile().Path()]
	if gf == nil {
		return nil, nil, fmt.Errorf("event %s: target_state enum %s not in the request", ev.Name(), ed.FullName())
	}
	e := findEnum(gf, ed.FullName())
	if e == nil {
		return nil, nil, fmt.Errorf("event %s: target_state enum %s not found", ev.Name(), ed.FullName())
	}
	for _, v := range e.Values {
		if v.Desc.Name() == ev.TargetState.Value.Name() {
			return e, v, nil
		}
	}
	return nil, nil, fmt.Errorf("event %s: target_state value %s not found", ev.Name(), ev.TargetState.Value.Name())
}

// codes renders the error-code range constants. Each pair follows its
// own comment, so gofmt aligns the two names of a pair only: To is two
// characters shorter than From.
func (g *fileGen) codes(w *writer, n eventNames, ranges []rangeConst) {
	if len(ranges) == 0 {
		return
	}
	w.doc(wrap(fmt.Sprintf(`Error-code ranges of %s, first and last code. A handler fails with a code
by returning classify.NewError(code, msg).`, n.Msg.GoName)))
	w.s("const (\n")
	for _, rc := range ranges {
		kind := "not retryable"
		if rc.r.Retryable {
			kind = "retryable"
		}
		w.comment("\t", wrap(fmt.Sprintf("Range %q, %s.", rc.r.Name, kind)))
		w.s("\t", rc.from, " int32 = ", strconv.Itoa(int(rc.r.From)), "\n",
			"\t", rc.to, "   int32 = ", strconv.Itoa(int(rc.r.To)), "\n")
	}
	w.s(")\n")
}

// classify renders Classify<Event>.
func (g *fileGen) classify(w *writer, n eventNames) {
	w.doc(wrap(fmt.Sprintf(`%s classifies an error code by %s's ranges; a code
outside every range follows its unclassified setting, with Range "".`, n.Classify, n.Spec)))
	w.s("func ", n.Classify, "(code int32) ", w.qual(pkgClassify, "Classification"), " {\n",
		"\treturn ", n.Spec, ".Rules.Code(code)\n",
		"}\n")
}

// bizKey renders the BizKey method.
func (g *fileGen) bizKey(w *writer, ev *model.Event, msg *protogen.Message) error {
	method := BizKeyMethod(msg)
	w.doc(wrap(fmt.Sprintf(`%s renders the idempotency key %q. An empty or unset field
fails with a *bizkey.Error coded EMPTY_FIELD, a key over 512 bytes KEY_TOO_LONG.`, method, ev.BizKeyTemplate)))
	w.s("func (m *", msg.GoIdent.GoName, ") ", method, "() (string, error) {\n",
		"\tvar b ", w.qual(pkgBizkey, "Builder"), "\n")
	for _, part := range ev.BizKey {
		if !part.IsPlaceholder() {
			w.s("\tb.Literal(", strconv.Quote(part.Literal), ")\n")
			continue
		}
		if err := g.placeholder(w, msg, part); err != nil {
			return fmt.Errorf("event %s: placeholder {%s}: %w", ev.Name(), part.Path, err)
		}
	}
	w.s("\treturn b.Key()\n",
		"}\n")
	return nil
}

// placeholder renders one placeholder: walk the sub-messages with nil-safe
// getters, check presence where the leaf has it, append the value.
func (g *fileGen) placeholder(w *writer, msg *protogen.Message, part model.KeyPart) error {
	recv := "m"
	cur := msg
	walk := ""
	for _, fd := range part.Fields[:len(part.Fields)-1] {
		fld, err := field(cur, fd)
		if err != nil {
			return err
		}
		if walk == "" {
			walk = "m"
		}
		walk += ".Get" + fld.GoName + "()"
		cur = fld.Message
	}
	leaf, err := field(cur, part.Leaf())
	if err != nil {
		return err
	}
	if walk != "" {
		recv = "x"
	}
	value := appendValue(recv, leaf, part.Path)
	var conds []string
	if walk != "" {
		conds = append(conds, "x == nil")
	}
	if leaf.Desc.HasPresence() {
		// protoreflect answers presence the same way for proto2, proto3
		// optional, oneof members and editions, in every Go API level.
		r := recv + ".ProtoReflect()"
		if walk == "" {
			r = "r" // declared in the if statement below
		}
		conds = append(conds, "!"+r+".Has("+r+".Descriptor().Fields().ByNumber("+strconv.Itoa(int(leaf.Desc.Number()))+"))")
	}
	if len(conds) == 0 {
		w.s("\t", value, "\n")
		return nil
	}
	init := "r := m.ProtoReflect()"
	if walk != "" {
		init = "x := " + walk
	}
	w.s("\tif ", init, "; ", strings.Join(conds, " || "), " {\n",
		"\t\tb.Fail(", strconv.Quote(part.Path), ")\n",
		"\t} else {\n",
		"\t\t", value, "\n",
		"\t}\n")
	return nil
}

// appendValue renders the Builder call for a leaf field's value.
func appendValue(recv string, leaf *protogen.Field, path string) string {
	get := recv + ".Get" + leaf.GoName + "()"
	switch kind := leaf.Desc.Kind().String(); kind {
	case "string":
		return "b.String(" + strconv.Quote(path) + ", " + get + ")"
	case "bool":
		return "b.Bool(" + get + ")"
	case "enum":
		// String() is the value's name, or its number for an unknown value
		// of an open enum: what the dynamic renderer writes too.
		return "b.Enum(" + get + ".String())"
	case "int64", "sint64", "sfixed64":
		return "b.Int(" + get + ")"
	case "int32", "sint32", "sfixed32":
		return "b.Int(int64(" + get + "))"
	case "uint64", "fixed64":
		return "b.Uint(" + get + ")"
	case "uint32", "fixed32":
		return "b.Uint(uint64(" + get + "))"
	default:
		// The linter rejects every other kind before generation.
		panic("biz_key field of kind " + kind)
	}
}

// producer renders New<Event>Envelope, Publish<Event> and
// Write<Event>ToOutbox.
func (g *fileGen) producer(w *writer, ev *model.Event, n eventNames, keyMethod string) {
	m := n.Msg.GoName
	w.doc(wrap(fmt.Sprintf(`%s wraps m and its biz_key in an envelope for topic %q. The
zero opts give a fresh message_id, occurred_at now and a binary payload.`, n.Envelope, ev.Topic)))
	w.s("func ", n.Envelope, "(m *", m, ", opts ", w.qual(pkgEvent, "Options"), ") (*", w.qual(pkgEnvelopepb, "Envelope"), ", error) {\n",
		"\tkey, err := m.", keyMethod, "()\n",
		"\tif err != nil {\n",
		"\t\treturn nil, err\n",
		"\t}\n",
		"\treturn ", w.qual(pkgEvent, "NewEnvelope"), "(", n.Spec, ", m, key, opts)\n",
		"}\n")

	w.doc(wrap(fmt.Sprintf(`%s publishes m's envelope to topic %q through p. To publish only
if a transaction commits, use %s.`, n.Publish, ev.Topic, n.Outbox)))
	w.s("func ", n.Publish, "(ctx ", w.qual(pkgContext, "Context"), ", p ", w.qual(pkgTransport, "Publisher"),
		", m *", m, ", opts ", w.qual(pkgEvent, "Options"), ") error {\n")
	g.envelope(w, n)
	w.s("\treturn p.Publish(ctx, ", n.Spec, ".Topic, env)\n",
		"}\n")

	w.doc(wrap(fmt.Sprintf(`%s stores m's envelope in the outbox within tx, the business
transaction; outbox.Relay publishes it once tx commits.`, n.Outbox)))
	w.s("func ", n.Outbox, "(ctx ", w.qual(pkgContext, "Context"), ", tx *", w.qual(pkgSQL, "Tx"),
		", m *", m, ", opts ", w.qual(pkgEvent, "Options"), ") error {\n")
	g.envelope(w, n)
	w.s("\treturn ", w.qual(pkgOutbox, "Write"), "(ctx, tx, env)\n",
		"}\n")
}

// envelope renders the first statements of Publish<Event> and
// Write<Event>ToOutbox: env from New<Event>Envelope, or return the error.
func (g *fileGen) envelope(w *writer, n eventNames) {
	w.s("\tenv, err := ", n.Envelope, "(m, opts)\n",
		"\tif err != nil {\n",
		"\t\treturn err\n",
		"\t}\n")
}

// consumer renders the typed handler and its registration.
func (g *fileGen) consumer(w *writer, ev *model.Event, n eventNames) {
	m := n.Msg.GoName
	w.doc(wrap(fmt.Sprintf(`%s handles a %s within tx, the transaction holding its dedup
claim; it must neither commit nor roll back tx. An error is classified by %s.`, n.Handler, m, n.Spec)))
	w.s("type ", n.Handler, " func(ctx ", w.qual(pkgContext, "Context"), ", tx *", w.qual(pkgSQL, "Tx"), ", m *", m, ") error\n")

	w.doc(wrap(fmt.Sprintf(`%s registers h with c for %s events. name keys the dedup
claims: keep it stable across deploys.`, n.Register, ev.EventType)))
	w.s("func ", n.Register, "(c *", w.qual(pkgConsumer, "Consumer"), ", name string, h ", n.Handler, ") error {\n",
		"\treturn ", w.qual(pkgConsumer, "Register"), "[*", m, "](c, name, ", n.Spec, ", func() *", m, " {\n",
		"\t\treturn new(", m, ")\n",
		"\t}, h)\n",
		"}\n")
}
