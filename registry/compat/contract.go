package compat

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/msgcontract/msgcontract/codegen/model"
)

// contract compares the msgcontract options: events, error classification
// and state machines.
func (c *checker) contract() {
	for _, of := range c.prev.set.Files {
		for _, oe := range of.Events {
			c.event(oe)
		}
		for _, osm := range of.StateMachines {
			c.stateMachine(osm)
		}
	}
}

func (c *checker) event(oe *model.Event) {
	name := c.newName(oe.Name())
	nd, ok := c.next.types[name]
	if !ok {
		return // MESSAGE_DELETED already says it
	}
	ne := c.next.set.Event(name)
	if ne == nil {
		c.report(EventRemoved, name, c.pos(nd), "message %s is no longer an event (its msgcontract.v1.event option was removed)", name)
		return
	}
	at := func(key string) model.Pos {
		if p, ok := ne.OptionPos[key]; ok && p.Line > 0 {
			return p
		}
		return ne.Pos
	}
	if oe.Topic != ne.Topic {
		c.report(EventTopicChanged, name, at("topic"), "event %s moved from topic %q to %q; publish to a new event instead", name, oe.Topic, ne.Topic)
	}
	if oe.EventType != ne.EventType {
		c.report(EventTypeChanged, name, at("event_type"), "event %s changed its event_type from %q to %q; consumers dispatch on it", name, oe.EventType, ne.EventType)
	}
	if oe.BizKeyTemplate != ne.BizKeyTemplate {
		c.report(EventBizKeyChanged, name, at("biz_key"),
			"event %s changed its biz_key from %q to %q; old and new producers would key the same fact differently and dedup would miss duplicates",
			name, oe.BizKeyTemplate, ne.BizKeyTemplate)
	}
	if os, ns := stateName(oe.TargetState), stateName(ne.TargetState); os != ns {
		c.report(EventTargetStateChanged, name, at("target_state"), "event %s changed its target_state from %q to %q", name, os, ns)
	}
	for _, s := range reclassified(oe.Rules, ne.Rules) {
		c.report(ErrorCodeReclassified, name, c.rangePos(ne, s.from), "%s", s.message())
	}
}

func stateName(r *model.StateRef) string {
	if r == nil {
		return ""
	}
	return string(r.Machine.Desc.Name()) + "." + string(r.Value.Name())
}

// rangePos is the new range holding code, or the event when none does.
// The model leaves range positions in import paths; they are mapped to
// the paths users see here.
func (c *checker) rangePos(e *model.Event, code int64) model.Pos {
	for _, r := range e.Rules.Ranges {
		if int64(r.From) <= code && code <= int64(r.To) && r.Pos.Line > 0 {
			p := r.Pos
			p.File = c.next.displayPath(p.File)
			return p
		}
	}
	return e.Pos
}

// span is a run of codes whose classification flipped.
type span struct {
	from, to int64
	// noCode marks errors carrying no code.
	noCode       bool
	wasRetryable bool
}

func (s span) message() string {
	was, now := "retryable", "not retryable"
	if !s.wasRetryable {
		was, now = now, was
	}
	var what string
	switch {
	case s.noCode:
		what = "errors without a code"
	case s.from == math.MinInt32 && s.to == math.MaxInt32:
		what = "every error code"
	case s.from == math.MinInt32:
		what = fmt.Sprintf("error codes up to %d", s.to)
	case s.to == math.MaxInt32:
		what = fmt.Sprintf("error codes from %d up", s.from)
	case s.from == s.to:
		what = fmt.Sprintf("error code %d", s.from)
	default:
		what = fmt.Sprintf("error codes %d..%d", s.from, s.to)
	}
	return fmt.Sprintf("%s were %s and are now %s; old and new consumers would disagree whether to retry", what, was, now)
}

// reclassified compares two classifications exactly. Both are constant
// between consecutive range boundaries, so it evaluates one code per
// elementary interval of the union of both range sets' boundaries, then
// merges adjacent flipped intervals.
func reclassified(a, b model.Rules) []span {
	ca, cb := a.Classify(), b.Classify()
	starts := map[int64]bool{math.MinInt32: true}
	for _, rs := range [][]model.ErrorRange{a.Ranges, b.Ranges} {
		for _, r := range rs {
			starts[int64(r.From)] = true
			if int64(r.To) < math.MaxInt32 {
				starts[int64(r.To)+1] = true
			}
		}
	}
	points := make([]int64, 0, len(starts))
	for p := range starts {
		points = append(points, p)
	}
	sort.Slice(points, func(i, j int) bool { return points[i] < points[j] })
	var out []span
	for i, p := range points {
		end := int64(math.MaxInt32)
		if i+1 < len(points) {
			end = points[i+1] - 1
		}
		ra, rb := ca.Code(int32(p)).Retryable, cb.Code(int32(p)).Retryable
		if ra == rb {
			continue
		}
		if n := len(out); n > 0 && out[n-1].to+1 == p && out[n-1].wasRetryable == ra {
			out[n-1].to = end
			continue
		}
		out = append(out, span{from: p, to: end, wasRetryable: ra})
	}
	if ca.NoCode().Retryable != cb.NoCode().Retryable {
		out = append(out, span{noCode: true, from: math.MinInt32, wasRetryable: ca.NoCode().Retryable})
	}
	return out
}

func (c *checker) stateMachine(osm *model.StateMachine) {
	name := c.newName(string(osm.Desc.FullName()))
	nd, ok := c.next.types[name]
	if !ok {
		return // ENUM_DELETED already says it
	}
	nsm := c.next.set.StateMachine(name)
	if nsm == nil {
		c.report(StateMachineRemoved, name, c.pos(nd), "enum %s is no longer a state machine (its msgcontract.v1.state_machine option was removed)", name)
		return
	}
	for _, os := range osm.States {
		ns := nsm.State(os.Name)
		for _, from := range os.From {
			elem := name + "." + os.Name
			if ns == nil {
				c.report(StateTransitionRemoved, elem, nsm.Pos, "transition %s -> %s was removed with state %s", from, os.Name, os.Name)
				continue
			}
			if !contains(ns.From, from) {
				c.report(StateTransitionRemoved, elem, ns.Pos,
					"transition %s -> %s was removed (now from: [%s]); consumers on the new schema would reject it as ILLEGAL", from, os.Name, strings.Join(ns.From, ", "))
			}
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
