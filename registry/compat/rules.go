// Package compat decides whether a new version of a contract may replace an
// old one. It compares two compiled schemas and reports every violation
// with a stable rule ID, the element it concerns and a file:line:col: in the
// new schema for what still exists there, in the previous schema for what
// was deleted with its file or its parent.
//
// Rules fall into categories: WIRE (the binary encoding and what parsers do
// with it), JSON (the JSON mapping), RPC (services), CONTRACT (the
// msgcontract options: biz_key, event type, topic, error classification,
// state transitions) and CODE (generated code only). Each rule says which
// directions it breaks: a new reader that can no longer read old data
// (BACKWARD), an old reader that can no longer read new data (FORWARD), or
// code generated from the old version that no longer compiles against the
// new one (Source). Levels pick reader directions; see Level. Rules that
// break both reader directions apply at every level but NONE. Source-only
// rules are reported only when asked for (WithSource, `breaking --code`):
// no reader or writer breaks at run time, so no registry level rejects them.
package compat

import (
	"fmt"
	"sort"
	"strings"
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
	// Source: code generated from the old version, compiled against the
	// new one. No level checks it; WithSource adds it.
	Source
	// BothWays is NewReadsOld | OldReadsNew.
	BothWays = NewReadsOld | OldReadsNew
)

// Category groups rules by what they protect.
type Category string

// The rule categories.
const (
	Wire     Category = "WIRE"
	JSON     Category = "JSON"
	RPC      Category = "RPC"
	Contract Category = "CONTRACT"
	Code     Category = "CODE"
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
	// Buf names the equivalent rules of `buf breaking`, if any.
	Buf string
	// Confluent names the Difference types of Confluent Schema Registry's
	// Protobuf checker that see the same change, with (compatible) when
	// that checker accepts it.
	Confluent string
}

// Levels names the levels at which r is checked.
func (r Rule) Levels() string {
	var ls []string
	for _, l := range []Level{Backward, Forward, Full} {
		if r.Breaks&l.Directions() != 0 {
			ls = append(ls, string(l))
		}
	}
	if len(ls) == 0 {
		return "none (`breaking --code`)"
	}
	if len(ls) == 3 {
		return "all but NONE"
	}
	return strings.Join(ls, ", ") + " and their _TRANSITIVE forms"
}

// InPrevious reports whether r's violations point into the previous
// version: the element was deleted with its parent or file.
func (r Rule) InPrevious() bool {
	return r.ID == MessageDeleted || r.ID == EnumDeleted || r.ID == ServiceDeleted
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
	FieldJSONNameChanged             = "FIELD_JSON_NAME_CHANGED"
	FieldTypeChanged                 = "FIELD_TYPE_CHANGED"
	FieldSignChanged                 = "FIELD_SIGN_CHANGED"
	FieldTypeWidened                 = "FIELD_TYPE_WIDENED"
	FieldTypeNarrowed                = "FIELD_TYPE_NARROWED"
	FieldCardinalityChanged          = "FIELD_CARDINALITY_CHANGED"
	FieldRequiredAdded               = "FIELD_REQUIRED_ADDED"
	FieldRequiredRemoved             = "FIELD_REQUIRED_REMOVED"
	FieldPresenceChanged             = "FIELD_PRESENCE_CHANGED"
	FieldDefaultChanged              = "FIELD_DEFAULT_CHANGED"
	FieldUTF8ValidationChanged       = "FIELD_UTF8_VALIDATION_CHANGED"
	FieldJavaUTF8Changed             = "FIELD_JAVA_UTF8_VALIDATION_CHANGED"
	FieldCTypeChanged                = "FIELD_CTYPE_CHANGED"
	FieldJSTypeChanged               = "FIELD_JSTYPE_CHANGED"
	FieldOneofChanged                = "FIELD_ONEOF_CHANGED"
	OneofFieldsMerged                = "ONEOF_FIELDS_MERGED"
	OneofFieldsSplit                 = "ONEOF_FIELDS_SPLIT"
	MessageJSONFormatChanged         = "MESSAGE_JSON_FORMAT_CHANGED"
	EnumJSONFormatChanged            = "ENUM_JSON_FORMAT_CHANGED"
	EnumTypeChanged                  = "ENUM_TYPE_CHANGED"
	EnumValueDeletedNumberUnreserved = "ENUM_VALUE_DELETED_NUMBER_UNRESERVED"
	EnumValueDeletedNameUnreserved   = "ENUM_VALUE_DELETED_NAME_UNRESERVED"
	EnumValueNumberChanged           = "ENUM_VALUE_NUMBER_CHANGED"
	EnumValueRenamed                 = "ENUM_VALUE_RENAMED"
	ReservedNumberRemoved            = "RESERVED_NUMBER_REMOVED"
	ReservedNameRemoved              = "RESERVED_NAME_REMOVED"
	ServiceDeleted                   = "SERVICE_DELETED"
	RPCDeleted                       = "RPC_DELETED"
	RPCRequestTypeChanged            = "RPC_REQUEST_TYPE_CHANGED"
	RPCResponseTypeChanged           = "RPC_RESPONSE_TYPE_CHANGED"
	RPCStreamingChanged              = "RPC_STREAMING_CHANGED"
	RPCIdempotencyChanged            = "RPC_IDEMPOTENCY_LEVEL_CHANGED"
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
	{PackageChanged, Wire, BothWays, "the file's package changed, so every type's full name changed (Any, type URLs and serializers' message lookups use it)",
		"FILE_SAME_PACKAGE", "PACKAGE_CHANGED"},
	{MessageDeleted, Wire, BothWays, "a message was deleted (or renamed, or moved into another); a subject's serializers and deserializers find messages by name and index",
		"MESSAGE_NO_DELETE", "MESSAGE_REMOVED"},
	{EnumDeleted, Code, Source, "an enum no field uses was deleted; no reader breaks (a field that used it reports FIELD_TYPE_CHANGED), code naming it does",
		"ENUM_NO_DELETE", "ENUM_REMOVED (compatible)"},
	{FieldDeletedNumberUnreserved, Wire, BothWays, "a field was deleted without reserving its number, so a later field may reuse the number with another type and misread old data",
		"FIELD_NO_DELETE_UNLESS_NUMBER_RESERVED", "FIELD_REMOVED (compatible)"},
	{FieldDeletedNameUnreserved, JSON, NewReadsOld, "a field was deleted without reserving its name, so a later field may take the name and new JSON readers would read old values of the deleted field into it",
		"FIELD_NO_DELETE_UNLESS_NAME_RESERVED", "FIELD_REMOVED (compatible)"},
	{FieldNumberChanged, Wire, BothWays, "a field kept its name but changed its number; on the wire it is a different field",
		"FIELD_NO_DELETE_UNLESS_NUMBER_RESERVED", "FIELD_REMOVED + FIELD_ADDED"},
	{FieldRenamed, JSON, BothWays, "a field kept its number but changed its name; JSON written with proto names no longer matches",
		"FIELD_SAME_NAME", "FIELD_NAME_CHANGED (compatible)"},
	{FieldJSONNameChanged, JSON, BothWays, "a field's JSON name (json_name, or the lowerCamel default) changed; JSON written with JSON names no longer matches",
		"FIELD_SAME_JSON_NAME", ""},
	{FieldTypeChanged, Wire, BothWays, "a field changed to a type with another wire encoding or JSON form (or another message or enum)",
		"FIELD_WIRE_JSON_COMPATIBLE_TYPE", "FIELD_KIND_CHANGED, FIELD_SCALAR_KIND_CHANGED, FIELD_NAMED_TYPE_CHANGED"},
	{FieldSignChanged, Wire, BothWays, "an integer field changed signedness within one encoding (int32 and uint32, int64 and uint64, fixed32 and sfixed32, fixed64 and sfixed64); out-of-range values read back as other numbers in binary and are rejected in JSON",
		"FIELD_WIRE_JSON_COMPATIBLE_TYPE (compatible)", "none (compatible)"},
	{FieldTypeWidened, Wire, OldReadsNew, "an integer field was widened (int32 to int64, say); old readers truncate large new values",
		"FIELD_WIRE_JSON_COMPATIBLE_TYPE", "none (compatible)"},
	{FieldTypeNarrowed, Wire, NewReadsOld, "an integer field was narrowed (int64 to int32, say); new readers truncate large old values",
		"FIELD_WIRE_JSON_COMPATIBLE_TYPE", "none (compatible)"},
	{FieldCardinalityChanged, Wire, BothWays, "a field changed between singular and repeated; one side keeps only the last element and the JSON shape differs",
		"FIELD_WIRE_JSON_COMPATIBLE_CARDINALITY", "FIELD_NUMERIC_LABEL_CHANGED, FIELD_STRING_OR_BYTES_LABEL_CHANGED"},
	{FieldRequiredAdded, Wire, NewReadsOld, "a field became required (proto2 `required`, editions LEGACY_REQUIRED) or a required field was added; old data without it fails to parse",
		"MESSAGE_SAME_REQUIRED_FIELDS", "REQUIRED_FIELD_ADDED"},
	{FieldRequiredRemoved, Wire, OldReadsNew, "a required field became optional or was deleted; old readers reject new data without it",
		"MESSAGE_SAME_REQUIRED_FIELDS", "REQUIRED_FIELD_REMOVED"},
	{FieldPresenceChanged, Code, Source, "a field gained or lost explicit presence (proto3 `optional`, a oneof, editions field_presence); generated has-accessors appear or go (the bytes do not change: a side without presence reads an absent field as its zero value, as it always did)",
		"FIELD_WIRE_JSON_COMPATIBLE_CARDINALITY", ""},
	{FieldDefaultChanged, Wire, BothWays, "a field's default value changed; readers of data without the field see another value",
		"FIELD_SAME_DEFAULT", ""},
	{FieldUTF8ValidationChanged, Wire, BothWays, "a string field's UTF-8 validation changed (proto2 and proto3, or editions utf8_validation); the validating side rejects data the other accepts",
		"FIELD_SAME_UTF8_VALIDATION", ""},
	{FieldJavaUTF8Changed, Wire, BothWays, "Java's UTF-8 check of a string field changed (java_string_check_utf8, or editions (pb.java).utf8_validation); Java readers reject data the other side accepts",
		"FIELD_SAME_JAVA_UTF8_VALIDATION", ""},
	{FieldCTypeChanged, Code, Source, "a field's C++ string type (ctype, editions (pb.cpp).string_type) changed; C++ code using the field no longer compiles",
		"FIELD_SAME_CPP_STRING_TYPE", ""},
	{FieldJSTypeChanged, Code, Source, "a field's jstype changed; JavaScript code sees numbers instead of strings or the reverse",
		"FIELD_SAME_JSTYPE", ""},
	{FieldOneofChanged, Code, Source, "a field moved into or out of a oneof, or its oneof was renamed; generated accessors change (the bytes do not; see ONEOF_FIELDS_MERGED and FIELD_PRESENCE_CHANGED for what readers see)",
		"FIELD_SAME_ONEOF", "ONEOF_ADDED, ONEOF_REMOVED (compatible)"},
	{OneofFieldsMerged, Wire, NewReadsOld, "fields that could be set together now share a oneof; new readers keep only one of them",
		"FIELD_SAME_ONEOF", "MULTIPLE_FIELDS_MOVED_TO_ONEOF, FIELD_MOVED_TO_EXISTING_ONEOF"},
	{OneofFieldsSplit, Wire, OldReadsNew, "fields of a oneof may now be set together; old readers keep only one of them",
		"FIELD_SAME_ONEOF", "ONEOF_FIELD_REMOVED"},
	{MessageJSONFormatChanged, JSON, BothWays, "a message's editions json_format changed; one side no longer guarantees a JSON mapping",
		"MESSAGE_SAME_JSON_FORMAT", ""},
	{EnumJSONFormatChanged, JSON, BothWays, "an enum's editions json_format changed; one side no longer guarantees a JSON mapping",
		"ENUM_SAME_JSON_FORMAT", ""},
	{EnumTypeChanged, Wire, BothWays, "an enum changed between open and closed (proto2 and proto3, or editions enum_type); closed readers move unknown values to unknown fields, open ones keep them",
		"ENUM_SAME_TYPE", ""},
	{EnumValueDeletedNumberUnreserved, Wire, BothWays, "an enum value was deleted without reserving its number, so a later value may reuse it with another meaning",
		"ENUM_VALUE_NO_DELETE_UNLESS_NUMBER_RESERVED", "ENUM_CONST_REMOVED (compatible)"},
	{EnumValueDeletedNameUnreserved, JSON, NewReadsOld, "an enum value was deleted without reserving its name, so a later value may take the name and new JSON readers would read old JSON naming it as the new value",
		"ENUM_VALUE_NO_DELETE_UNLESS_NAME_RESERVED", "ENUM_CONST_REMOVED (compatible)"},
	{EnumValueNumberChanged, Wire, BothWays, "an enum value kept its name but changed its number; binary and JSON readers disagree on its meaning",
		"ENUM_VALUE_NO_DELETE_UNLESS_NUMBER_RESERVED", "ENUM_CONST_CHANGED (compatible)"},
	{EnumValueRenamed, JSON, BothWays, "an enum value kept its number but changed its name; JSON carries enum values by name",
		"ENUM_VALUE_SAME_NAME", "ENUM_CONST_CHANGED (compatible)"},
	{ReservedNumberRemoved, Wire, BothWays, "a reserved field or enum value number is no longer reserved; a later version may reuse it with another type or meaning",
		"RESERVED_MESSAGE_NO_DELETE, RESERVED_ENUM_NO_DELETE", ""},
	{ReservedNameRemoved, JSON, BothWays, "a reserved field or enum value name is no longer reserved; a later version may reuse it and JSON readers would misread old data",
		"RESERVED_MESSAGE_NO_DELETE, RESERVED_ENUM_NO_DELETE", ""},
	{ServiceDeleted, RPC, BothWays, "a service was deleted; clients calling it get Unimplemented",
		"SERVICE_NO_DELETE", ""},
	{RPCDeleted, RPC, BothWays, "an RPC was deleted; clients calling it get Unimplemented",
		"RPC_NO_DELETE", ""},
	{RPCRequestTypeChanged, RPC, BothWays, "an RPC's request type changed; servers decode old clients' requests as another message",
		"RPC_SAME_REQUEST_TYPE", ""},
	{RPCResponseTypeChanged, RPC, BothWays, "an RPC's response type changed; clients decode the server's responses as another message",
		"RPC_SAME_RESPONSE_TYPE", ""},
	{RPCStreamingChanged, RPC, BothWays, "an RPC changed between unary and client or server streaming; the call shapes no longer match",
		"RPC_SAME_CLIENT_STREAMING, RPC_SAME_SERVER_STREAMING", ""},
	{RPCIdempotencyChanged, RPC, BothWays, "an RPC's idempotency_level changed; clients choose the HTTP method and retries by it",
		"RPC_SAME_IDEMPOTENCY_LEVEL", ""},
	{EventRemoved, Contract, BothWays, "a message lost its event option; producers and consumers no longer agree it is an event", "", ""},
	{EventTopicChanged, Contract, BothWays, "an event's topic changed; old consumers stop receiving what new producers publish", "", ""},
	{EventTypeChanged, Contract, BothWays, "an event's event_type changed; consumers dispatch on it and old ones would drop new messages", "", ""},
	{EventBizKeyChanged, Contract, BothWays, "an event's biz_key template changed; old and new producers would key one business fact differently and dedup fails", "", ""},
	{EventTargetStateChanged, Contract, BothWays, "an event's target_state changed; old and new consumers would move the entity to different states", "", ""},
	{ErrorCodeReclassified, Contract, BothWays, "an error code moved between retryable and non-retryable; old and new consumers would treat one failure differently", "", ""},
	{StateMachineRemoved, Contract, BothWays, "an enum lost its state_machine option; consumers could no longer check transitions", "", ""},
	{StateTransitionRemoved, Contract, BothWays, "a state transition was removed; old producers' messages become illegal transitions for new consumers", "", ""},
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
