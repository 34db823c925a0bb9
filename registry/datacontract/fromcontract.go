package datacontract

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/msgcontract/msgcontract/codegen/model"
)

// Metadata properties FromContract sets.
const (
	propEvents       = "msgcontract.events"
	propErrorRanges  = "msgcontract.error_ranges"
	propUnclassified = "msgcontract.unclassified"
	propUnenforced   = "msgcontract.bizkey.unenforced"
	propStateUnenf   = "msgcontract.state.unenforced"
	bizKeyRulePrefix = "msgcontract-bizkey-"
	stateRulePrefix  = "msgcontract-state-"
)

// FromContract is the data contract a msgcontract contract file implies
// (what `msgcontract registry push` and the console's register attach), for Confluent's
// serializers to enforce at produce time: metadata describing its events
// (topic, event type, biz_key template, retry policy) and error ranges,
// and a CEL CONDITION on WRITE, onFailure ERROR, for each biz_key
// placeholder that can be empty (a string, a sub-message on a dotted path,
// an optional field), which fails as msgcontract's own key rendering does
// (EMPTY_FIELD). Every record of a subject meets every rule of it, so a
// rule is attached only for a placeholder every event of the file has,
// with the same fields; the others are listed under
// msgcontract.bizkey.unenforced. Likewise, when every event of the file
// has a target state and a state field (StateField) of the same name and
// enum, a CEL CONDITION on WRITE, onFailure ERROR, requires that field to
// hold one of the events' target states (by number: CEL compares enums as
// ints), failing where CheckState fails for a file of one event; other
// state fields are listed under msgcontract.state.unenforced. Both are
// non-nil, so that pushing a contract replaces what the previous version
// had.
func FromContract(f *model.File) (*Metadata, *RuleSet) {
	md := &Metadata{Properties: map[string]string{}}
	rs := &RuleSet{}
	if len(f.Events) == 0 {
		return md, rs
	}
	var names []string
	for _, ev := range f.Events {
		names = append(names, ev.Name())
		p := "msgcontract.event." + ev.Name() + "."
		md.Properties[p+"topic"] = ev.Topic
		md.Properties[p+"event_type"] = ev.EventType
		md.Properties[p+"biz_key"] = ev.BizKeyTemplate
		md.Properties[p+"retry"] = retrySummary(ev)
		if ev.TargetState != nil {
			md.Properties[p+"target_state"] = string(ev.TargetState.Value.Name())
		}
	}
	md.Properties[propEvents] = strings.Join(names, ",")
	var ranges []string
	for _, r := range f.Defaults.Rules.Ranges {
		kind := "not retryable"
		if r.Retryable {
			kind = "retryable"
		}
		ranges = append(ranges, fmt.Sprintf("%d..%d %s %s", r.From, r.To, r.Name, kind))
	}
	if len(ranges) > 0 {
		md.Properties[propErrorRanges] = strings.Join(ranges, "; ")
	}
	md.Properties[propUnclassified] = "not retryable"
	if f.Defaults.Rules.UnclassifiedRetryable {
		md.Properties[propUnclassified] = "retryable"
	}

	// A placeholder is enforced when every event has it, resolved to
	// fields of the same names and kinds.
	type check struct {
		path, expr string
		events     int
	}
	checks := map[string]*check{}
	var order, unenforced []string
	for _, ev := range f.Events {
		seen := map[string]bool{}
		for _, part := range ev.BizKey {
			if !part.IsPlaceholder() || seen[part.Path] {
				continue
			}
			seen[part.Path] = true
			expr := nonEmpty(part.Fields)
			if expr == "" {
				continue // an int, bool or enum always renders
			}
			key := part.Path + "\x00" + expr
			c := checks[key]
			if c == nil {
				c = &check{path: part.Path, expr: expr}
				checks[key] = c
				order = append(order, key)
			}
			c.events++
		}
	}
	for _, key := range order {
		c := checks[key]
		if c.events < len(f.Events) {
			unenforced = append(unenforced, c.path)
			continue
		}
		rs.DomainRules = append(rs.DomainRules, Rule{
			Name: bizKeyRulePrefix + strings.ReplaceAll(c.path, ".", "-"),
			Doc:  fmt.Sprintf("biz_key placeholder {%s} must not be empty (msgcontract: EMPTY_FIELD)", c.path),
			Kind: KindCondition, Mode: ModeWrite, Type: "CEL",
			Expr: c.expr, OnFailure: ActionError,
		})
	}
	if len(unenforced) > 0 {
		slices.Sort(unenforced)
		md.Properties[propUnenforced] = strings.Join(slices.Compact(unenforced), ",")
	}
	if r, unenf := stateRule(f); r != nil {
		rs.DomainRules = append(rs.DomainRules, *r)
	} else if unenf != "" {
		md.Properties[propStateUnenf] = unenf
	}
	return md, rs
}

// StateField is the field of ev's message holding the state ev moves its
// entity to: its one singular field whose type is the target state's
// enum. It is nil when ev has no target state, or no such field, or
// several.
func StateField(ev *model.Event) protoreflect.FieldDescriptor {
	if ev.TargetState == nil {
		return nil
	}
	var found protoreflect.FieldDescriptor
	fields := ev.Desc.Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if fd.Kind() != protoreflect.EnumKind || fd.IsList() || fd.IsMap() ||
			fd.Enum().FullName() != ev.TargetState.Machine.Desc.FullName() {
			continue
		}
		if found != nil {
			return nil
		}
		found = fd
	}
	return found
}

// CheckState is msgcontract's check of a record's state: an error when
// ev's state field (StateField) does not hold ev's target state; nil when
// it does or ev has no state field.
func CheckState(ev *model.Event, m protoreflect.Message) error {
	fd := StateField(ev)
	if fd == nil {
		return nil
	}
	want := ev.TargetState.Value
	if got := m.Get(fd).Enum(); got != want.Number() {
		name := strconv.Itoa(int(got))
		if v := fd.Enum().Values().ByNumber(got); v != nil {
			name = string(v.Name())
		}
		return fmt.Errorf("%s.%s is %s, not the target state %s", ev.Desc.Name(), fd.Name(), name, want.Name())
	}
	return nil
}

// stateRule is the rule that every event's state field holds a target
// state of the file's events, when every event has a state field of the
// same name and enum; otherwise nil and the state fields, comma-separated.
func stateRule(f *model.File) (*Rule, string) {
	var field protoreflect.FieldDescriptor
	var names []string
	allowed := map[protoreflect.EnumNumber]string{}
	same := true
	for _, ev := range f.Events {
		fd := StateField(ev)
		if fd == nil {
			same = false
			continue
		}
		names = append(names, string(fd.Name()))
		if field == nil {
			field = fd
		} else if fd.Name() != field.Name() || fd.Enum().FullName() != field.Enum().FullName() {
			same = false
		}
		allowed[ev.TargetState.Value.Number()] = string(ev.TargetState.Value.Name())
	}
	if field == nil {
		return nil, ""
	}
	if !same {
		slices.Sort(names)
		return nil, strings.Join(slices.Compact(names), ",")
	}
	nums := slices.Sorted(maps.Keys(allowed))
	var ints, states []string
	for _, n := range nums {
		ints = append(ints, strconv.Itoa(int(n)))
		states = append(states, fmt.Sprintf("%s (%d)", allowed[n], n))
	}
	path := "message." + string(field.Name())
	expr := path + " == " + ints[0]
	doc := fmt.Sprintf("state field %s must hold the target state %s of %s (msgcontract: target_state)", field.Name(), states[0], field.Enum().FullName())
	if len(nums) > 1 {
		expr = path + " in [" + strings.Join(ints, ", ") + "]"
		doc = fmt.Sprintf("state field %s must hold one of the target states %s of %s (msgcontract: target_state)", field.Name(), strings.Join(states, ", "), field.Enum().FullName())
	}
	return &Rule{
		Name: stateRulePrefix + string(field.Name()),
		Doc:  doc,
		Kind: KindCondition, Mode: ModeWrite, Type: "CEL",
		Expr: expr, OnFailure: ActionError,
	}, ""
}

// nonEmpty is the CEL condition that the placeholder along fields renders
// (msgcontract's EMPTY_FIELD otherwise), or "" when it always does.
func nonEmpty(fields []protoreflect.FieldDescriptor) string {
	var conds []string
	path := "message"
	for i, fd := range fields {
		path += "." + string(fd.Name())
		leaf := i == len(fields)-1
		switch {
		case !leaf:
			conds = append(conds, "has("+path+")") // an unset sub-message is empty
		case fd.Kind() == protoreflect.StringKind:
			if fd.HasPresence() {
				conds = append(conds, "has("+path+")")
			}
			conds = append(conds, path+" != ''")
		case fd.HasPresence():
			conds = append(conds, "has("+path+")")
		}
	}
	if len(conds) == 0 {
		return ""
	}
	return strings.Join(conds, " && ")
}

// retrySummary is an event's effective retry policy in one line.
func retrySummary(ev *model.Event) string {
	p := ev.Policy
	src := "file default"
	if ev.PolicyFromEvent {
		src = "event"
	}
	return "base " + strconv.FormatInt(p.BaseMs, 10) + "ms x" + strconv.FormatFloat(p.Multiplier, 'g', -1, 64) +
		" jitter " + strconv.FormatInt(p.JitterMs, 10) + "ms max " + strconv.FormatInt(p.MaxDelayMs, 10) +
		"ms retries " + strconv.Itoa(p.MaxRetries) + " (" + src + ")"
}
