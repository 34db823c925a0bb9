package model

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/msgcontract/msgcontract/third_party/protocompile/ast"
	"github.com/msgcontract/msgcontract/third_party/protocompile/linker"
	"github.com/msgcontract/msgcontract/third_party/protocompile/protoutil"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/msgcontract/msgcontract/codegen/keytemplate"
	"github.com/msgcontract/msgcontract/runtime-go/backoff"
	"github.com/msgcontract/msgcontract/runtime-go/classify"
	"github.com/msgcontract/msgcontract/runtime-go/optionspb"
)

type builder struct {
	set     *Set
	diags   Diagnostics
	pending []pendingTarget
}

type pendingTarget struct {
	event *Event
	value string
	pos   Pos
}

func (b *builder) errorf(pos Pos, rule, format string, args ...any) {
	b.diags = append(b.diags, Diagnostic{Pos: pos, Rule: rule, Message: fmt.Sprintf(format, args...)})
}

// ext reads extension xt from an options message. protocompile keeps
// options of extensions it has no Go type for as unknown fields, or sets
// them with a dynamic type of its own; a round trip through the wire
// format (with the global registry, where msgcontract's option types are
// linked in) makes them typed.
func ext[T proto.Message](opts proto.Message, xt protoreflect.ExtensionType) (T, bool) {
	var zero T
	if opts == nil || !opts.ProtoReflect().IsValid() {
		return zero, false
	}
	// Options decoded with the option types linked in (descriptors from
	// protoc's request, in the plugin) hold the extension typed already;
	// options holding neither it nor unknown fields do not hold it. Only
	// the rest need the round trip.
	var (
		value          protoreflect.Value
		typed, present bool
		dynamic        proto.Message
	)
	opts.ProtoReflect().Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if !fd.IsExtension() || fd.Number() != xt.TypeDescriptor().Number() {
			return true
		}
		present = true
		if xd, ok := fd.(protoreflect.ExtensionTypeDescriptor); ok && xd.Type() == xt {
			value, typed = v, true
		} else if fd.Message() != nil && !fd.IsList() && !fd.IsMap() {
			dynamic = v.Message().Interface()
		}
		return false
	})
	if typed {
		v, ok := xt.InterfaceOf(value).(T)
		return v, ok
	}
	// protocompile's own (dynamic) type of the extension: only its value
	// makes the round trip, not the whole options message.
	if dynamic != nil {
		raw, err := proto.Marshal(dynamic)
		if err != nil {
			return zero, false
		}
		fresh, ok := xt.New().Message().Interface().(T)
		if !ok {
			return zero, false
		}
		if err := proto.Unmarshal(raw, fresh); err != nil {
			return zero, false
		}
		return fresh, true
	}
	if !present && len(opts.ProtoReflect().GetUnknown()) == 0 {
		return zero, false
	}
	raw, err := proto.Marshal(opts)
	if err != nil {
		return zero, false
	}
	fresh := opts.ProtoReflect().Type().New().Interface()
	if err := proto.Unmarshal(raw, fresh); err != nil || !proto.HasExtension(fresh, xt) {
		return zero, false
	}
	v, ok := proto.GetExtension(fresh, xt).(T)
	return v, ok
}

func astNode(res linker.Result, d protoreflect.Descriptor) ast.NodeWithOptions {
	if res == nil {
		return nil
	}
	if _, ok := d.(protoreflect.FileDescriptor); ok {
		return res.FileNode()
	}
	n, _ := res.Node(protoutil.ProtoFromDescriptor(d)).(ast.NodeWithOptions)
	return n
}

// index indexes option xt of d. Without an AST (descriptors from protoc)
// findings point at the option statement, from source info.
func index(res linker.Result, d protoreflect.Descriptor, xt protoreflect.ExtensionType) *optIndex {
	idx := indexOptions(fileNode(res), astNode(res, d), string(xt.TypeDescriptor().FullName()))
	if idx.file == nil {
		idx.declared = optionPos(d, xt)
	}
	return idx
}

// position is where d is declared: from the AST when there is one, else
// from source info.
func position(res linker.Result, d protoreflect.Descriptor) Pos {
	if res == nil {
		return declPos(d)
	}
	return nodePos(fileNode(res), astNode(res, d))
}

func fileNode(res linker.Result) *ast.FileNode {
	if res == nil {
		return nil
	}
	return res.AST()
}

func (b *builder) file(fd protoreflect.FileDescriptor, res linker.Result, display string) *File {
	f := &File{Path: fd.Path(), DisplayPath: display, Desc: fd}
	f.Defaults = Defaults{Policy: backoff.Default, Rules: Rules{UnclassifiedRetryable: true}}
	if !seesOptions(fd) {
		// No msgcontract option can appear in it: nothing to model or
		// check. Most files of a large repository are such.
		return f
	}
	idx := index(res, fd, optionspb.E_Defaults)
	if d, ok := ext[*optionspb.Defaults](fd.Options(), optionspb.E_Defaults); ok {
		if d.Retry != nil {
			f.Defaults.Policy = b.policy(d.Retry, idx, "retry")
		}
		f.Defaults.Rules = b.rules(d, idx)
	}
	// State machines first: events' target_state refers to them.
	var enums []protoreflect.EnumDescriptor
	var msgs []protoreflect.MessageDescriptor
	collect(fd.Enums(), fd.Messages(), &enums, &msgs)
	for _, ed := range enums {
		b.enum(f, ed, res)
	}
	for _, md := range msgs {
		b.message(f, md, res)
	}
	return f
}

func collect(enums protoreflect.EnumDescriptors, msgs protoreflect.MessageDescriptors, outE *[]protoreflect.EnumDescriptor, outM *[]protoreflect.MessageDescriptor) {
	for i := 0; i < enums.Len(); i++ {
		*outE = append(*outE, enums.Get(i))
	}
	for i := 0; i < msgs.Len(); i++ {
		md := msgs.Get(i)
		if md.IsMapEntry() {
			continue
		}
		*outM = append(*outM, md)
		collect(md.Enums(), md.Messages(), outE, outM)
	}
}

func (b *builder) rules(d *optionspb.Defaults, idx *optIndex) Rules {
	r := Rules{UnclassifiedRetryable: d.GetUnclassified() != optionspb.Unclassified_NON_RETRYABLE}
	for i, rg := range d.GetErrorRanges() {
		path := fmt.Sprintf("error_ranges[%d]", i)
		er := ErrorRange{
			Range: classify.Range{From: rg.GetFrom(), To: rg.GetTo(), Retryable: rg.GetRetryable(), Name: rg.GetName()},
			Pos:   idx.pos(path),
		}
		if er.From > er.To {
			b.errorf(idx.pos(path+".to"), "RANGE_ORDER", "error range %q has from %d > to %d; swap them", er.Name, er.From, er.To)
		}
		if er.Name == "" {
			b.errorf(er.Pos, "RANGE_NAME", "error range %d..%d has no name; classifications report it, so name it (e.g. \"business\")", er.From, er.To)
		}
		for _, prev := range r.Ranges {
			if prev.From <= prev.To && er.From <= er.To && er.From <= prev.To && prev.From <= er.To {
				b.errorf(idx.pos(path+".from"), "RANGE_OVERLAP", "error range %q (%d..%d) overlaps range %q (%d..%d) declared at line %d; ranges must not overlap",
					er.Name, er.From, er.To, prev.Name, prev.From, prev.To, prev.Pos.Line)
			}
		}
		r.Ranges = append(r.Ranges, er)
	}
	return r
}

// policy resolves a retry policy; unset fields take built-in defaults.
// It reads the contract's text (durations must parse, in whole
// milliseconds); what makes a policy valid is backoff.Policy.Validate's
// to say, the runtime's own check, whose every FieldError becomes a
// diagnostic at that field. An invalid field falls back to its default so
// that --explain still has a policy to show.
func (b *builder) policy(rp *optionspb.RetryPolicy, idx *optIndex, path string) backoff.Policy {
	p := backoff.Default
	dur := func(field, v string, dst *int64) {
		if v == "" {
			return
		}
		d, err := time.ParseDuration(v)
		switch {
		case err != nil:
			b.errorf(idx.pos(path+"."+field), "RETRY_DURATION", "%s %q is not a duration; write e.g. \"500ms\", \"1s\" or \"1m30s\"", field, v)
		case d%time.Millisecond != 0:
			b.errorf(idx.pos(path+"."+field), "RETRY_DURATION", "%s %q is not a whole number of milliseconds", field, v)
		default:
			*dst = d.Milliseconds()
		}
	}
	dur("base_delay", rp.GetBaseDelay(), &p.BaseMs)
	dur("jitter", rp.GetJitter(), &p.JitterMs)
	dur("max_delay", rp.GetMaxDelay(), &p.MaxDelayMs)
	if rp.Multiplier != nil {
		p.Multiplier = rp.GetMultiplier()
	}
	if rp.MaxRetries != nil {
		p.MaxRetries = int(rp.GetMaxRetries())
	}
	err := p.Validate()
	if err == nil {
		return p
	}
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		var fe *backoff.FieldError
		if !errors.As(e, &fe) {
			b.errorf(idx.pos(path), "RETRY_POLICY", "%v", e)
			continue
		}
		b.errorf(idx.pos(path+"."+fe.Field), policyRule(fe.Err), "%s", fe.Msg)
		switch fe.Field {
		case "base_delay":
			p.BaseMs = backoff.Default.BaseMs
		case "jitter":
			p.JitterMs = backoff.Default.JitterMs
		case "max_delay":
			p.MaxDelayMs = backoff.Default.MaxDelayMs
		case "multiplier":
			p.Multiplier = backoff.Default.Multiplier
		case "max_retries":
			p.MaxRetries = backoff.Default.MaxRetries
		}
	}
	return p
}

// policyRule is the lint rule of a backoff.Validate sentinel.
func policyRule(sentinel error) string {
	switch sentinel {
	case backoff.ErrNegative:
		return "RETRY_DURATION"
	case backoff.ErrMultiplier:
		return "RETRY_MULTIPLIER"
	case backoff.ErrMaxRetries:
		return "RETRY_MAX_RETRIES"
	case backoff.ErrMaxBelowBase:
		return "RETRY_MAX_DELAY"
	}
	return "RETRY_POLICY"
}

func (b *builder) enum(f *File, ed protoreflect.EnumDescriptor, res linker.Result) {
	_, isMachine := ext[*optionspb.StateMachine](ed.Options(), optionspb.E_StateMachine)
	var sm *StateMachine
	if isMachine {
		sm = &StateMachine{Desc: ed, File: f, Pos: position(res, ed)}
		f.StateMachines = append(f.StateMachines, sm)
	}
	values := ed.Values()
	for i := 0; i < values.Len(); i++ {
		vd := values.Get(i)
		tr, hasTr := ext[*optionspb.Transition](vd.Options(), optionspb.E_Transition)
		idx := index(res, vd, optionspb.E_Transition)
		if hasTr && !isMachine {
			b.errorf(idx.pos(""), "TRANSITION_NOT_STATE_MACHINE", "transition on %s, but enum %s is not a state machine; add option (msgcontract.v1.state_machine) = {};", vd.Name(), ed.Name())
		}
		if !isMachine {
			continue
		}
		st := &State{Desc: vd, Name: string(vd.Name()), Pos: position(res, vd)}
		if hasTr && vd.Number() == 0 && len(tr.GetFrom()) > 0 {
			b.errorf(idx.pos(""), "TRANSITION_ZERO", "%s is the zero value of %s and cannot be a transition target; zero means unset", vd.Name(), ed.Name())
		}
		for j, from := range tr.GetFrom() {
			p := idx.pos(fmt.Sprintf("from[%d]", j))
			src := values.ByName(protoreflect.Name(from))
			switch {
			case src == nil:
				b.errorf(p, "TRANSITION_UNKNOWN", "transition from %q: %s has no such value%s", from, ed.Name(), didYouMean(from, valueNames(ed)))
			case src.Number() == 0:
				b.errorf(p, "TRANSITION_ZERO", "transition from %q: the zero value means unset and is never a state", from)
			}
			st.From = append(st.From, from)
			st.FromPos = append(st.FromPos, p)
		}
		sm.States = append(sm.States, st)
	}
}

func (b *builder) message(f *File, md protoreflect.MessageDescriptor, res linker.Result) {
	ev, ok := ext[*optionspb.Event](md.Options(), optionspb.E_Event)
	if !ok {
		return
	}
	idx := index(res, md, optionspb.E_Event)
	e := &Event{
		Desc: md, File: f,
		Topic: ev.GetTopic(), EventType: ev.GetEventType(), BizKeyTemplate: ev.GetBizKey(),
		Policy: f.Defaults.Policy, Rules: f.Defaults.Rules,
		Pos:       position(res, md),
		OptionPos: map[string]Pos{},
	}
	for _, k := range []string{"topic", "event_type", "biz_key", "retry", "target_state"} {
		if idx.has(k) {
			e.OptionPos[k] = idx.pos(k)
		}
	}
	if e.Topic == "" {
		b.errorf(idx.pos(""), "EVENT_TOPIC", "event %s has no topic; set topic: \"...\" in its event option", md.Name())
	}
	if e.EventType == "" {
		b.errorf(idx.pos(""), "EVENT_TYPE", "event %s has no event_type; set event_type: \"...\" in its event option", md.Name())
	}
	if ev.Retry != nil {
		e.Policy = b.policy(ev.Retry, idx, "retry")
		e.PolicyFromEvent = true
	}
	e.BizKey = b.bizKey(md, ev.GetBizKey(), idx)
	if ts := ev.GetTargetState(); ts != "" {
		b.pending = append(b.pending, pendingTarget{event: e, value: ts, pos: idx.pos("target_state")})
	}
	f.Events = append(f.Events, e)
}

func (b *builder) bizKey(md protoreflect.MessageDescriptor, tmpl string, idx *optIndex) []KeyPart {
	if !idx.has("biz_key") && tmpl == "" {
		example := ""
		if f := keyField(md); f != "" {
			example = fmt.Sprintf(", e.g. biz_key: \"%s:{%s}\"", f, f)
		}
		b.errorf(idx.pos(""), "BIZKEY_MISSING", "event %s has no biz_key; compose one from its string, integer, bool or enum fields%s", md.Name(), example)
		return nil
	}
	segs, err := keytemplate.Parse(tmpl)
	if err != nil {
		te := err.(*keytemplate.Error)
		b.errorf(idx.posIn("biz_key", tmpl, te.Offset), "BIZKEY_SYNTAX", "%s", te.Msg)
		return nil
	}
	var parts []KeyPart
	placeholders := 0
	for _, s := range segs {
		if !s.IsPlaceholder() {
			parts = append(parts, KeyPart{Literal: s.Literal})
			continue
		}
		placeholders++
		pos := idx.posIn("biz_key", tmpl, s.Offset+1)
		fields, ok := b.resolvePath(md, s.Path, pos)
		if ok {
			parts = append(parts, KeyPart{Fields: fields, Path: s.Placeholder()})
		}
	}
	if placeholders == 0 {
		b.errorf(idx.pos("biz_key"), "BIZKEY_CONSTANT", "biz_key %q has no placeholder, so every %s would share one key and all but the first would be dropped as duplicates", tmpl, md.Name())
	}
	return parts
}

// resolvePath walks a placeholder path through singular sub-messages to a
// field whose text form is the same in every language.
func (b *builder) resolvePath(md protoreflect.MessageDescriptor, path []string, pos Pos) ([]protoreflect.FieldDescriptor, bool) {
	var fields []protoreflect.FieldDescriptor
	cur := md
	for i, name := range path {
		fd := cur.Fields().ByName(protoreflect.Name(name))
		if fd == nil {
			b.errorf(pos, "BIZKEY_UNKNOWN_FIELD", "placeholder {%s}: %s has no field %q%s", strings.Join(path, "."), cur.Name(), name, suggest(cur, name))
			return nil, false
		}
		fields = append(fields, fd)
		last := i == len(path)-1
		switch {
		case fd.IsMap():
			b.errorf(pos, "BIZKEY_FIELD_TYPE", "placeholder {%s}: %s is a map; a key needs one value, use a singular field", strings.Join(path, "."), fd.Name())
			return nil, false
		case fd.IsList():
			b.errorf(pos, "BIZKEY_FIELD_TYPE", "placeholder {%s}: %s is repeated; a key needs one value, use a singular field", strings.Join(path, "."), fd.Name())
			return nil, false
		case !last && fd.Message() == nil:
			b.errorf(pos, "BIZKEY_FIELD_TYPE", "placeholder {%s}: %s is a %s, not a message, so it has no field %q", strings.Join(path, "."), fd.Name(), fd.Kind(), path[i+1])
			return nil, false
		case !last:
			cur = fd.Message()
		case fd.Message() != nil:
			example := ""
			if f := keyField(fd.Message()); f != "" {
				example = fmt.Sprintf(", e.g. {%s.%s}", strings.Join(path, "."), f)
			}
			b.errorf(pos, "BIZKEY_FIELD_TYPE", "placeholder {%s}: %s is a message (%s); name one of its fields instead%s",
				strings.Join(path, "."), fd.Name(), fd.Message().FullName(), example)
			return nil, false
		case !keyKind(fd.Kind()):
			b.errorf(pos, "BIZKEY_FIELD_TYPE", "placeholder {%s}: %s is %s; biz_key fields must be string, an integer kind, bool or enum, because the text of a %s differs between languages",
				strings.Join(path, "."), fd.Name(), fd.Kind(), fd.Kind())
			return nil, false
		}
	}
	return fields, true
}

func keyKind(k protoreflect.Kind) bool {
	switch k {
	case protoreflect.FloatKind, protoreflect.DoubleKind, protoreflect.BytesKind,
		protoreflect.MessageKind, protoreflect.GroupKind:
		return false
	}
	return true
}

// keyField is the first field of md a placeholder may name, for hints
// that must only ever suggest a field that exists; "" when there is none.
func keyField(md protoreflect.MessageDescriptor) string {
	fields := md.Fields()
	for i := 0; i < fields.Len(); i++ {
		if fd := fields.Get(i); !fd.IsList() && !fd.IsMap() && keyKind(fd.Kind()) {
			return string(fd.Name())
		}
	}
	return ""
}

func suggest(md protoreflect.MessageDescriptor, name string) string {
	fields := md.Fields()
	var names []string
	for i := 0; i < fields.Len(); i++ {
		names = append(names, string(fields.Get(i).Name()))
	}
	lower := strings.ToLower(strings.ReplaceAll(name, "_", ""))
	for _, n := range names {
		if strings.ToLower(strings.ReplaceAll(n, "_", "")) == lower {
			return fmt.Sprintf("; did you mean %q? (placeholders use proto field names)", n)
		}
	}
	if len(names) == 0 {
		return ""
	}
	return fmt.Sprintf(" (fields: %s)", strings.Join(names, ", "))
}

// resolveTargets resolves target_state once every state machine is known.
func (b *builder) resolveTargets() {
	for _, p := range b.pending {
		dot := strings.LastIndexByte(p.value, '.')
		if dot <= 0 || dot == len(p.value)-1 {
			b.errorf(p.pos, "TARGET_STATE_SYNTAX", "target_state %q must be written Enum.VALUE, e.g. \"OrderState.PAID\"", p.value)
			continue
		}
		enumName, valueName := p.value[:dot], p.value[dot+1:]
		ed := b.findEnum(p.event.Desc, enumName)
		if ed == nil {
			b.errorf(p.pos, "TARGET_STATE_UNKNOWN", "target_state %q: no enum %q is visible from %s", p.value, enumName, p.event.Desc.FullName())
			continue
		}
		sm := b.set.StateMachine(string(ed.FullName()))
		if sm == nil {
			b.errorf(p.pos, "TARGET_STATE_NOT_MACHINE", "target_state %q: enum %s is not a state machine; add option (msgcontract.v1.state_machine) = {}; to it", p.value, ed.FullName())
			continue
		}
		vd := ed.Values().ByName(protoreflect.Name(valueName))
		if vd == nil {
			b.errorf(p.pos, "TARGET_STATE_UNKNOWN", "target_state %q: %s has no value %q%s", p.value, ed.Name(), valueName, didYouMean(valueName, valueNames(ed)))
			continue
		}
		if vd.Number() == 0 {
			b.errorf(p.pos, "TARGET_STATE_ZERO", "target_state %q names the zero value, which means unset", p.value)
			continue
		}
		p.event.TargetState = &StateRef{Machine: sm, Value: vd}
	}
}

// findEnum resolves name the way protobuf resolves type references: from
// the innermost scope of from outwards, then as a full name.
func (b *builder) findEnum(from protoreflect.Descriptor, name string) protoreflect.EnumDescriptor {
	if strings.HasPrefix(name, ".") {
		return b.enumByName(name[1:])
	}
	for scope := from.FullName(); scope != ""; scope = scope.Parent() {
		if ed := b.enumByName(string(scope) + "." + name); ed != nil {
			return ed
		}
	}
	return b.enumByName(name)
}

func (b *builder) enumByName(full string) protoreflect.EnumDescriptor {
	d, err := b.set.Registry.FindDescriptorByName(protoreflect.FullName(strings.TrimPrefix(full, ".")))
	if err != nil {
		return nil
	}
	ed, _ := d.(protoreflect.EnumDescriptor)
	return ed
}

// optionsPath declares msgcontract's options.
const optionsPath = "msgcontract/v1/options.proto"

// seesOptions reports whether fd can use msgcontract's options: it imports
// options.proto directly or through a chain of public imports, or (edition
// 2024) names it in an `import option`.
func seesOptions(fd protoreflect.FileDescriptor) bool {
	imps := fd.Imports()
	for i := 0; i < imps.Len(); i++ {
		if exposesOptions(imps.Get(i).FileDescriptor, 0) {
			return true
		}
	}
	opts := optionImports(fd)
	for i := 0; i < opts.Len(); i++ {
		if exposesOptions(opts.Get(i).FileDescriptor, 0) {
			return true
		}
	}
	return false
}

// Edition is fd's edition: EDITION_PROTO2 or EDITION_PROTO3 for a syntax
// file. protoreflect does not declare it; protobuf-go's file descriptors
// answer it, a descriptor of another implementation is converted.
func Edition(fd protoreflect.FileDescriptor) descriptorpb.Edition {
	if e, ok := fd.(interface{ Edition() int32 }); ok {
		return descriptorpb.Edition(e.Edition())
	}
	return protodesc.ToFileDescriptorProto(fd).GetEdition()
}

// noImports is the empty list of imports.
type noImports struct{ protoreflect.FileImports }

func (noImports) Len() int { return 0 }

// optionImports are the files fd imports with `import option` (edition
// 2024): protobuf-go's descriptors and the loader's answer them through a
// method that protoreflect.FileDescriptor does not declare.
func optionImports(fd protoreflect.FileDescriptor) protoreflect.FileImports {
	if o, ok := fd.(interface {
		OptionImports() protoreflect.FileImports
	}); ok {
		return o.OptionImports()
	}
	return noImports{}
}

// exposesOptions reports whether importing fd makes the options visible.
// depth bounds a (protoc-rejected) cycle of public imports.
func exposesOptions(fd protoreflect.FileDescriptor, depth int) bool {
	if fd.Path() == optionsPath {
		return true
	}
	if depth > 32 {
		return false
	}
	imps := fd.Imports()
	for i := 0; i < imps.Len(); i++ {
		if imp := imps.Get(i); imp.IsPublic && exposesOptions(imp.FileDescriptor, depth+1) {
			return true
		}
	}
	return false
}
