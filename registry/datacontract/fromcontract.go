package datacontract

import (
	"fmt"
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
	bizKeyRulePrefix = "msgcontract-bizkey-"
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
// msgcontract.bizkey.unenforced. Both are non-nil, so that pushing a
// contract replaces what the previous version had.
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
	return md, rs
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
