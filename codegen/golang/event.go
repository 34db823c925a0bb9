package golang

import (
	"fmt"

	"github.com/dave/jennifer/jen"
	"google.golang.org/protobuf/compiler/protogen"

	"github.com/msgcontract/msgcontract/codegen/model"
)

// event renders everything generated for one event: its contract as data,
// error-code constants, classification, BizKey, producer and consumer.
func (g *fileGen) event(f *jen.File, ev *model.Event) error {
	msg := g.message(ev.Desc)
	if msg == nil {
		return fmt.Errorf("event %s: message not found", ev.Name())
	}
	n := namesOf(msg)
	ranges := rangeConsts(n, ev.Rules)
	g.spec(f, ev, n, msg)
	if err := g.targetState(f, ev, n); err != nil {
		return err
	}
	g.codes(f, ev, n, ranges)
	g.classify(f, n)
	if err := g.bizKey(f, ev, msg); err != nil {
		return err
	}
	g.producer(f, ev, n, BizKeyMethod(msg))
	g.consumer(f, ev, n)
	return nil
}

// spec renders var <Event>Spec.
func (g *fileGen) spec(f *jen.File, ev *model.Event, n eventNames, msg *protogen.Message) {
	p := ev.Policy
	policySource := "the file's default retry policy"
	if ev.PolicyFromEvent {
		policySource = "its own retry policy"
	}
	var ranges []jen.Code
	for _, r := range ev.Rules.Ranges {
		ranges = append(ranges, jen.Values(
			jen.Id("From").Op(":").Lit(int(r.From)),
			jen.Id("To").Op(":").Lit(int(r.To)),
			jen.Id("Retryable").Op(":").Lit(r.Retryable),
			jen.Id("Name").Op(":").Lit(r.Name),
		))
	}
	rules := []jen.Code{}
	if len(ranges) > 0 {
		rules = append(rules, jen.Id("Ranges").Op(":").Index().Qual(pkgClassify, "Range").Custom(multi, ranges...))
	}
	rules = append(rules, jen.Id("UnclassifiedRetryable").Op(":").Lit(ev.Rules.UnclassifiedRetryable))

	f.Add(docComment(fmt.Sprintf(`%s is the contract of %s as data: topic %q, event
type %q, schema subject %q ("<topic>-value", Confluent's TopicNameStrategy
default), %s and error ranges. SchemaVersion is 0 (unknown) unless the
service sets it, e.g. from the schema registry at startup.`, n.Spec, msg.GoIdent.GoName, ev.Topic, ev.EventType, ev.Topic+"-value", policySource), leadingComments(ev.Desc)))
	f.Var().Id(n.Spec).Op("=").Op("&").Qual(pkgEvent, "Spec").Custom(multi,
		jen.Id("FullName").Op(":").Lit(ev.Name()),
		jen.Id("Topic").Op(":").Lit(ev.Topic),
		jen.Id("EventType").Op(":").Lit(ev.EventType),
		jen.Id("Subject").Op(":").Lit(ev.Topic+"-value"),
		jen.Id("Policy").Op(":").Qual(pkgBackoff, "Policy").Custom(multi,
			jen.Id("BaseMs").Op(":").Lit(int(p.BaseMs)),
			jen.Id("Multiplier").Op(":").Lit(p.Multiplier),
			jen.Id("JitterMs").Op(":").Lit(int(p.JitterMs)),
			jen.Id("MaxDelayMs").Op(":").Lit(int(p.MaxDelayMs)),
			jen.Id("MaxRetries").Op(":").Lit(p.MaxRetries),
		),
		jen.Id("Rules").Op(":").Qual(pkgClassify, "Rules").Custom(multi, rules...),
	)
}

// targetState renders <Event>TargetState for an event with a target_state.
func (g *fileGen) targetState(f *jen.File, ev *model.Event, n eventNames) error {
	if ev.TargetState == nil {
		return nil
	}
	name := n.TargetState
	ed := ev.TargetState.Machine.Desc
	gf := g.plugin.FilesByPath[ed.ParentFile().Path()]
	if gf == nil {
		return fmt.Errorf("event %s: target_state enum %s not in the request", ev.Name(), ed.FullName())
	}
	e := findEnum(gf, ed.FullName())
	if e == nil {
		return fmt.Errorf("event %s: target_state enum %s not found", ev.Name(), ed.FullName())
	}
	var value *protogen.EnumValue
	for _, v := range e.Values {
		if v.Desc.Name() == ev.TargetState.Value.Name() {
			value = v
		}
	}
	if value == nil {
		return fmt.Errorf("event %s: target_state value %s not found", ev.Name(), ev.TargetState.Value.Name())
	}
	f.Add(comment(fmt.Sprintf(`%s is the state a %s moves its entity to; check the move with %s.`,
		name, n.Msg.GoName, canTransitName(e))))
	f.Const().Id(name).Op("=").Qual(string(value.GoIdent.GoImportPath), value.GoIdent.GoName)
	return nil
}

// multi renders a composite literal with one element per line.
var multi = jen.Options{Open: "{", Close: "}", Separator: ",", Multi: true}

// codes renders the error-code range constants.
func (g *fileGen) codes(f *jen.File, ev *model.Event, n eventNames, ranges []rangeConst) {
	if len(ranges) == 0 {
		return
	}
	var defs []jen.Code
	for _, rc := range ranges {
		kind := "not retryable"
		if rc.r.Retryable {
			kind = "retryable"
		}
		defs = append(defs,
			comment(fmt.Sprintf("Range %q, %s.", rc.r.Name, kind)),
			jen.Id(rc.from).Int32().Op("=").Lit(int(rc.r.From)),
			jen.Id(rc.to).Int32().Op("=").Lit(int(rc.r.To)),
		)
	}
	f.Add(comment(fmt.Sprintf(`Error-code ranges of %s, first and last code. A handler fails with a code
by returning classify.NewError(code, msg).`, n.Msg.GoName)))
	f.Const().Defs(defs...)
}

// classify renders Classify<Event>.
func (g *fileGen) classify(f *jen.File, n eventNames) {
	f.Add(comment(fmt.Sprintf(`%s classifies an error code by %s's ranges; a code
outside every range follows its unclassified setting, with Range "".`, n.Classify, n.Spec)))
	f.Func().Id(n.Classify).Params(jen.Id("code").Int32()).Qual(pkgClassify, "Result").Block(
		jen.Return(jen.Id(n.Spec).Dot("Rules").Dot("Code").Call(jen.Id("code"))),
	)
}

// bizKey renders the BizKey method.
func (g *fileGen) bizKey(f *jen.File, ev *model.Event, msg *protogen.Message) error {
	var body []jen.Code
	body = append(body, jen.Var().Id("b").Qual(pkgBizkey, "Builder"))
	for _, part := range ev.BizKey {
		if !part.IsPlaceholder() {
			body = append(body, jen.Id("b").Dot("Literal").Call(jen.Lit(part.Literal)))
			continue
		}
		code, err := g.placeholder(msg, part)
		if err != nil {
			return fmt.Errorf("event %s: placeholder {%s}: %w", ev.Name(), part.Path, err)
		}
		body = append(body, code)
	}
	body = append(body, jen.Return(jen.Id("b").Dot("Key").Call()))
	method := BizKeyMethod(msg)
	f.Add(comment(fmt.Sprintf(`%s renders the idempotency key %q. An empty or unset field
fails with a *bizkey.Error coded EMPTY_FIELD, a key over 512 bytes KEY_TOO_LONG.`, method, ev.BizKeyTemplate)))
	f.Func().Params(jen.Id("m").Op("*").Id(msg.GoIdent.GoName)).Id(method).Params().Params(jen.String(), jen.Error()).Block(body...)
	return nil
}

// placeholder renders one placeholder: walk the sub-messages with nil-safe
// getters, check presence where the leaf has it, append the value.
func (g *fileGen) placeholder(msg *protogen.Message, part model.KeyPart) (jen.Code, error) {
	recv := jen.Id("m")
	cur := msg
	var walk *jen.Statement
	for _, fd := range part.Fields[:len(part.Fields)-1] {
		fld, err := field(cur, fd)
		if err != nil {
			return nil, err
		}
		if walk == nil {
			walk = jen.Id("m")
		}
		walk = walk.Dot("Get" + fld.GoName).Call()
		cur = fld.Message
	}
	leaf, err := field(cur, part.Leaf())
	if err != nil {
		return nil, err
	}
	if walk != nil {
		recv = jen.Id("x")
	}
	fail := jen.Id("b").Dot("Fail").Call(jen.Lit(part.Path))
	value := appendValue(recv, leaf, part.Path)
	var conds []jen.Code
	if walk != nil {
		conds = append(conds, jen.Id("x").Op("==").Nil())
	}
	if leaf.Desc.HasPresence() {
		// protoreflect answers presence the same way for proto2, proto3
		// optional, oneof members and editions, in every Go API level.
		r := jen.Add(recv).Dot("ProtoReflect").Call()
		if walk == nil {
			r = jen.Id("r") // declared in the if statement below
		}
		conds = append(conds, jen.Op("!").Add(r).Dot("Has").Call(
			jen.Add(r).Dot("Descriptor").Call().Dot("Fields").Call().Dot("ByNumber").Call(jen.Lit(int(leaf.Desc.Number()))),
		))
	}
	if len(conds) == 0 {
		return value, nil
	}
	cond := conds[0]
	for _, c := range conds[1:] {
		cond = jen.Add(cond).Op("||").Add(c)
	}
	stmt := jen.If(jen.Id("r").Op(":=").Id("m").Dot("ProtoReflect").Call(), cond)
	if walk != nil {
		stmt = jen.If(jen.Id("x").Op(":=").Add(walk), cond)
	}
	return stmt.Block(fail).Else().Block(value), nil
}

// appendValue renders the Builder call for a leaf field's value.
func appendValue(recv jen.Code, leaf *protogen.Field, path string) jen.Code {
	get := jen.Add(recv).Dot("Get" + leaf.GoName).Call()
	b := jen.Id("b")
	switch kind := leaf.Desc.Kind().String(); kind {
	case "string":
		return b.Dot("String").Call(jen.Lit(path), get)
	case "bool":
		return b.Dot("Bool").Call(get)
	case "enum":
		// String() is the value's name, or its number for an unknown value
		// of an open enum: what the dynamic renderer writes too.
		return b.Dot("Enum").Call(jen.Add(get).Dot("String").Call())
	case "int64", "sint64", "sfixed64":
		return b.Dot("Int").Call(get)
	case "int32", "sint32", "sfixed32":
		return b.Dot("Int").Call(jen.Int64().Call(get))
	case "uint64", "fixed64":
		return b.Dot("Uint").Call(get)
	case "uint32", "fixed32":
		return b.Dot("Uint").Call(jen.Uint64().Call(get))
	default:
		// The linter rejects every other kind before generation.
		panic("biz_key field of kind " + kind)
	}
}

// producer renders New<Event>Envelope, Publish<Event> and
// Write<Event>ToOutbox.
func (g *fileGen) producer(f *jen.File, ev *model.Event, n eventNames, keyMethod string) {
	m := n.Msg.GoName
	f.Add(comment(fmt.Sprintf(`%s wraps m and its biz_key in an envelope for topic %q. The
zero opts give a fresh message_id, occurred_at now and a binary payload.`, n.Envelope, ev.Topic)))
	f.Func().Id(n.Envelope).Params(
		jen.Id("m").Op("*").Id(m), jen.Id("opts").Qual(pkgEvent, "Options"),
	).Params(jen.Op("*").Qual(pkgEnvelopepb, "Envelope"), jen.Error()).Block(
		jen.List(jen.Id("key"), jen.Err()).Op(":=").Id("m").Dot(keyMethod).Call(),
		jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Nil(), jen.Err())),
		jen.Return(jen.Qual(pkgEvent, "NewEnvelope").Call(jen.Id(n.Spec), jen.Id("m"), jen.Id("key"), jen.Id("opts"))),
	)

	f.Add(comment(fmt.Sprintf(`%s publishes m's envelope to topic %q through p. To publish only
if a transaction commits, use %s.`, n.Publish, ev.Topic, n.Outbox)))
	f.Func().Id(n.Publish).Params(
		jen.Id("ctx").Qual(pkgContext, "Context"), jen.Id("p").Qual(pkgTransport, "Publisher"),
		jen.Id("m").Op("*").Id(m), jen.Id("opts").Qual(pkgEvent, "Options"),
	).Error().Block(
		jen.List(jen.Id("env"), jen.Err()).Op(":=").Id(n.Envelope).Call(jen.Id("m"), jen.Id("opts")),
		jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Err())),
		jen.Return(jen.Id("p").Dot("Publish").Call(jen.Id("ctx"), jen.Id(n.Spec).Dot("Topic"), jen.Id("env"))),
	)

	g.outbox(f, n)
}

func (g *fileGen) outbox(f *jen.File, n eventNames) {
	f.Add(comment(fmt.Sprintf(`%s stores m's envelope in the outbox within tx, the business
transaction; outbox.Relay publishes it once tx commits.`, n.Outbox)))
	f.Func().Id(n.Outbox).Params(
		jen.Id("ctx").Qual(pkgContext, "Context"), jen.Id("tx").Op("*").Qual(pkgSQL, "Tx"),
		jen.Id("m").Op("*").Id(n.Msg.GoName), jen.Id("opts").Qual(pkgEvent, "Options"),
	).Error().Block(
		jen.List(jen.Id("env"), jen.Err()).Op(":=").Id(n.Envelope).Call(jen.Id("m"), jen.Id("opts")),
		jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Err())),
		jen.Return(jen.Qual(pkgOutbox, "Write").Call(jen.Id("ctx"), jen.Id("tx"), jen.Id("env"))),
	)
}

// consumer renders the typed handler and its registration.
func (g *fileGen) consumer(f *jen.File, ev *model.Event, n eventNames) {
	m := n.Msg.GoName
	f.Add(comment(fmt.Sprintf(`%s handles a %s within tx, the transaction holding its dedup
claim; it must neither commit nor roll back tx. An error is classified by %s.`, n.Handler, m, n.Spec)))
	f.Type().Id(n.Handler).Func().Params(
		jen.Id("ctx").Qual(pkgContext, "Context"), jen.Id("tx").Op("*").Qual(pkgSQL, "Tx"), jen.Id("m").Op("*").Id(m),
	).Error()

	f.Add(comment(fmt.Sprintf(`%s registers h with c for %s events. name keys the dedup
claims: keep it stable across deploys.`, n.Register, ev.EventType)))
	f.Func().Id(n.Register).Params(
		jen.Id("c").Op("*").Qual(pkgConsumer, "Consumer"), jen.Id("name").String(), jen.Id("h").Id(n.Handler),
	).Error().Block(
		jen.Return(jen.Qual(pkgConsumer, "Register").Types(jen.Op("*").Id(m)).Call(
			jen.Id("c"), jen.Id("name"), jen.Id(n.Spec),
			jen.Func().Params().Op("*").Id(m).Block(jen.Return(jen.New(jen.Id(m)))),
			jen.Id("h"),
		)),
	)
}
