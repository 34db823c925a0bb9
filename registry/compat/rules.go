// Package compat decides whether a new version of a contract may replace an
// old one. It compares two resolved contract models (codegen/model) and
// reports every violation with a stable rule ID, the element it concerns and
// its file:line:col in the new schema.
//
// Rules fall into three categories: WIRE (the binary encoding), JSON (the
// proto-name JSON form msgcontract uses everywhere) and CONTRACT (the
// msgcontract options: biz_key, event type, topic, error classification,
// state transitions). Each rule says in which direction it breaks: a new
// reader that can no longer read old data (BACKWARD), an old reader that can
// no longer read new data (FORWARD), or both. Levels pick directions; see
// Level. Contract rules break both directions, so they apply at every level
// except NONE: old and new consumers of one topic would disagree during a
// rolling deploy whichever side upgrades first.
package compat

import (
	"fmt"
	"sort"
)

// Direction is a set of reader/writer pairings a change can break.
type Direction uint8

const (
	// NewReadsOld: consumers on the new schema read data written with the
	// old one (what BACKWARD protects).
	NewReadsOld Direction = 1 << iota
	// OldReadsNew: consumers still on the old schema read data written with
	// the new one (what FORWARD protects).
	OldReadsNew
	// BothWays is NewReadsOld | OldReadsNew.
	BothWays = NewReadsOld | OldReadsNew
)

// Category groups rules by what they protect.
type Category string

// The rule categories.
const (
	Wire     Category = "WIRE"
	JSON     Category = "JSON"
	Contract Category = "CONTRACT"
)

// Rule describes one compatibility rule.
type Rule struct {
	// ID is stable: scripts and suppressions may rely on it.
	ID       string
	Category Category
	// Breaks is the set of directions the change breaks.
	Breaks Direction
	// Doc is one sentence saying what is breaking and why.
	Doc string
}

// Rule IDs. They are part of the public interface: never renamed.
const (
	PackageChanged                   = "PACKAGE_CHANGED"
	MessageDeleted                   = "MESSAGE_DELETED"
	EnumDeleted                      = "ENUM_DELETED"
	FieldDeletedNumberUnreserved     = "FIELD_DELETED_NUMBER_UNRESERVED"
	FieldDeletedNameUnreserved       = "FIELD_DELETED_NAME_UNRESERVED"
	FieldNumberChanged               = "FIELD_NUMBER_CHANGED"
	FieldRenamed                     = "FIELD_RENAMED"
	FieldTypeChanged                 = "FIELD_TYPE_CHANGED"
	FieldTypeWidened                 = "FIELD_TYPE_WIDENED"
	FieldTypeNarrowed                = "FIELD_TYPE_NARROWED"
	FieldCardinalityChanged          = "FIELD_CARDINALITY_CHANGED"
	FieldRequiredAdded               = "FIELD_REQUIRED_ADDED"
	FieldRequiredRemoved             = "FIELD_REQUIRED_REMOVED"
	OneofFieldsMerged                = "ONEOF_FIELDS_MERGED"
	OneofFieldsSplit                 = "ONEOF_FIELDS_SPLIT"
	EnumValueDeletedNumberUnreserved = "ENUM_VALUE_DELETED_NUMBER_UNRESERVED"
	EnumValueDeletedNameUnreserved   = "ENUM_VALUE_DELETED_NAME_UNRESERVED"
	EnumValueNumberChanged           = "ENUM_VALUE_NUMBER_CHANGED"
	EnumValueRenamed                 = "ENUM_VALUE_RENAMED"
	EventRemoved                     = "EVENT_REMOVED"
	EventTopicChanged                = "EVENT_TOPIC_CHANGED"
	EventTypeChanged                 = "EVENT_TYPE_CHANGED"
	EventBizKeyChanged               = "EVENT_BIZ_KEY_CHANGED"
	EventTargetStateChanged          = "EVENT_TARGET_STATE_CHANGED"
	ErrorCodeReclassified            = "ERROR_CODE_RECLASSIFIED"
	StateMachineRemoved              = "STATE_MACHINE_REMOVED"
	StateTransitionRemoved           = "STATE_TRANSITION_REMOVED"
)

var rules = []Rule{
	{PackageChanged, Wire, BothWays, "the file's package changed, so every type's full name changed (Any, type URLs and serializers' message lookups use it)"},
	{MessageDeleted, Wire, BothWays, "a message was deleted; fields and subjects that name it no longer resolve"},
	{EnumDeleted, Wire, BothWays, "an enum was deleted; fields that name it no longer resolve"},
	{FieldDeletedNumberUnreserved, Wire, BothWays, "a field was deleted without reserving its number, so a later field may reuse the number with another type and misread old data"},
	{FieldDeletedNameUnreserved, JSON, NewReadsOld, "a field was deleted without reserving its name; new JSON readers reject old JSON that still carries it"},
	{FieldNumberChanged, Wire, BothWays, "a field kept its name but changed its number; on the wire it is a different field"},
	{FieldRenamed, JSON, BothWays, "a field kept its number but changed its name; JSON with proto names no longer matches"},
	{FieldTypeChanged, Wire, BothWays, "a field changed to a type with another wire encoding or JSON form (or another message or enum)"},
	{FieldTypeWidened, Wire, OldReadsNew, "an integer field was widened (int32 to int64, say); old readers truncate large new values"},
	{FieldTypeNarrowed, Wire, NewReadsOld, "an integer field was narrowed (int64 to int32, say); new readers truncate large old values"},
	{FieldCardinalityChanged, Wire, BothWays, "a field changed between singular and repeated; one side keeps only the last element and the JSON shape differs"},
	{FieldRequiredAdded, Wire, NewReadsOld, "a proto2 field became required (or a required field was added); old data without it fails to parse"},
	{FieldRequiredRemoved, Wire, OldReadsNew, "a proto2 required field became optional or was deleted; old readers reject new data without it"},
	{OneofFieldsMerged, Wire, NewReadsOld, "fields that could be set together now share a oneof; new readers keep only one of them"},
	{OneofFieldsSplit, Wire, OldReadsNew, "fields of a oneof may now be set together; old readers keep only one of them"},
	{EnumValueDeletedNumberUnreserved, Wire, BothWays, "an enum value was deleted without reserving its number, so a later value may reuse it with another meaning"},
	{EnumValueDeletedNameUnreserved, JSON, NewReadsOld, "an enum value was deleted without reserving its name; new JSON readers reject old JSON naming it"},
	{EnumValueNumberChanged, Wire, BothWays, "an enum value kept its name but changed its number; binary and JSON readers disagree on its meaning"},
	{EnumValueRenamed, JSON, BothWays, "an enum value kept its number but changed its name; JSON carries enum values by name"},
	{EventRemoved, Contract, BothWays, "a message lost its event option; producers and consumers no longer agree it is an event"},
	{EventTopicChanged, Contract, BothWays, "an event's topic changed; old consumers stop receiving what new producers publish"},
	{EventTypeChanged, Contract, BothWays, "an event's event_type changed; consumers dispatch on it and old ones would drop new messages"},
	{EventBizKeyChanged, Contract, BothWays, "an event's biz_key template changed; old and new producers would key one business fact differently and dedup fails"},
	{EventTargetStateChanged, Contract, BothWays, "an event's target_state changed; old and new consumers would move the entity to different states"},
	{ErrorCodeReclassified, Contract, BothWays, "an error code moved between retryable and non-retryable; old and new consumers would treat one failure differently"},
	{StateMachineRemoved, Contract, BothWays, "an enum lost its state_machine option; consumers could no longer check transitions"},
	{StateTransitionRemoved, Contract, BothWays, "a state transition was removed; old producers' messages become illegal transitions for new consumers"},
}

var byID = func() map[string]Rule {
	m := make(map[string]Rule, len(rules))
	for _, r := range rules {
		m[r.ID] = r
	}
	return m
}()

// Rules returns every rule, sorted by ID.
func Rules() []Rule {
	out := append([]Rule(nil), rules...)
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// LookupRule returns the rule with id.
func LookupRule(id string) (Rule, bool) {
	r, ok := byID[id]
	return r, ok
}

func mustRule(id string) Rule {
	r, ok := byID[id]
	if !ok {
		panic(fmt.Sprintf("compat: unknown rule %q", id))
	}
	return r
}
