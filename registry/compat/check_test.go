package compat_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/msgcontract/msgcontract/codegen/model"
	"github.com/msgcontract/msgcontract/registry/compat"
)

const header = `syntax = "proto3";
package t.v1;
import "msgcontract/v1/options.proto";
`

const proto2Header = `syntax = "proto2";
package t.v1;
`

// load compiles one schema held in memory; a body without a syntax line
// gets the proto3 header.
func load(t testing.TB, src string) *model.Set {
	t.Helper()
	if !strings.HasPrefix(src, "syntax") {
		src = header + src
	}
	set, err := model.Load(context.Background(), model.Config{Sources: map[string]string{"t.proto": src}}, "t.proto")
	if err != nil {
		t.Fatalf("schema does not compile: %v\n%s", err, src)
	}
	return set
}

// The contract used by the CONTRACT cases; each case replaces parts of it.
const (
	defaults = `option (msgcontract.v1.defaults) = {
  error_ranges: [
    { from: 40000 to: 49999 retryable: false name: "business" },
    { from: 50000 to: 59999 retryable: true name: "system" }
  ]
  unclassified: RETRYABLE
};
`
	states = `enum S {
  option (msgcontract.v1.state_machine) = {};
  S_UNSPECIFIED = 0;
  A = 1;
  B = 2 [(msgcontract.v1.transition) = { from: ["A"] }];
  C = 3 [(msgcontract.v1.transition) = { from: ["A", "B"] }];
}
`
	event = `message E {
  option (msgcontract.v1.event) = {
    topic: "orders" event_type: "E_DONE" biz_key: "id:{id}" target_state: "S.B"
  };
  string id = 1;
  int64 n = 2;
}
`
	contractBase = defaults + states + event
)

func replace(s string, pairs ...string) string { return strings.NewReplacer(pairs...).Replace(s) }

type compatCase struct {
	name     string
	old, new string
	level    compat.Level // FULL when empty
	want     []string
}

var cases = []compatCase{
	// Unchanged and additive changes.
	{name: "identical", old: `message M { string a = 1; }`, new: `message M { string a = 1; }`},
	{name: "field added", old: `message M { string a = 1; }`, new: `message M { string a = 1; int32 b = 2; }`},
	{name: "message added", old: `message M { string a = 1; }`, new: `message M { string a = 1; } message N { int32 x = 1; }`},
	{name: "enum added", old: `message M { string a = 1; }`, new: `message M { string a = 1; } enum K { K_UNSPECIFIED = 0; }`},
	{name: "fields reordered in source", old: `message M { string a = 1; int32 b = 2; }`, new: `message M { int32 b = 2; string a = 1; }`},
	{name: "comment changed", old: `message M { string a = 1; }`, new: "message M {\n  // The a.\n  string a = 1;\n}"},
	{name: "proto3 optional added", old: `message M { string a = 1; }`, new: `message M { optional string a = 1; }`},
	{name: "json_name changed (proto names are used)", old: `message M { string a = 1; }`, new: `message M { string a = 1 [json_name = "x"]; }`},
	{name: "oneof renamed", old: `message M { oneof o { string a = 1; int32 b = 2; } }`, new: `message M { oneof p { string a = 1; int32 b = 2; } }`},
	{name: "field added to existing oneof", old: `message M { oneof o { string a = 1; } }`, new: `message M { oneof o { string a = 1; int32 b = 2; } }`},
	{name: "single field moved into new oneof", old: `message M { string a = 1; }`, new: `message M { oneof o { string a = 1; } }`},
	{name: "enum value added", old: `enum K { K_UNSPECIFIED = 0; X = 1; }`, new: `enum K { K_UNSPECIFIED = 0; X = 1; Y = 2; }`},
	{name: "enum alias added", old: `enum K { K_UNSPECIFIED = 0; X = 1; }`, new: `enum K { option allow_alias = true; K_UNSPECIFIED = 0; X = 1; X2 = 1; }`},
	{name: "map unchanged", old: `message M { map<string, int32> m = 1; }`, new: `message M { map<string, int32> m = 1; }`},

	// Deleted fields.
	{name: "field deleted", old: `message M { string a = 1; int32 b = 2; }`, new: `message M { string a = 1; }`,
		want: []string{compat.FieldDeletedNameUnreserved, compat.FieldDeletedNumberUnreserved}},
	{name: "field deleted number reserved", old: `message M { string a = 1; int32 b = 2; }`, new: `message M { string a = 1; reserved 2; }`,
		want: []string{compat.FieldDeletedNameUnreserved}},
	{name: "field deleted name reserved", old: `message M { string a = 1; int32 b = 2; }`, new: `message M { string a = 1; reserved "b"; }`,
		want: []string{compat.FieldDeletedNumberUnreserved}},
	{name: "field deleted both reserved", old: `message M { string a = 1; int32 b = 2; }`, new: `message M { string a = 1; reserved 2; reserved "b"; }`},
	{name: "field deleted number in reserved range", old: `message M { string a = 1; int32 b = 7; }`, new: `message M { string a = 1; reserved 5 to 10; reserved "b"; }`},
	{name: "field deleted number reserved BACKWARD", level: compat.Backward, old: `message M { int32 b = 2; }`, new: `message M { reserved 2; }`,
		want: []string{compat.FieldDeletedNameUnreserved}},
	{name: "field deleted number reserved FORWARD", level: compat.Forward, old: `message M { int32 b = 2; }`, new: `message M { reserved 2; }`},
	{name: "field deleted FORWARD", level: compat.Forward, old: `message M { int32 b = 2; }`, new: `message M { }`,
		want: []string{compat.FieldDeletedNumberUnreserved}},
	{name: "all fields deleted", old: `message M { string a = 1; int32 b = 2; }`, new: `message M { }`,
		want: []string{compat.FieldDeletedNameUnreserved, compat.FieldDeletedNumberUnreserved}},
	{name: "number reused with another name and type", old: `message M { string a = 1; }`, new: `message M { int32 z = 1; }`,
		want: []string{compat.FieldRenamed, compat.FieldTypeChanged}},

	// Names and numbers.
	{name: "field renamed", old: `message M { string a = 1; }`, new: `message M { string b = 1; }`, want: []string{compat.FieldRenamed}},
	{name: "field renamed BACKWARD", level: compat.Backward, old: `message M { string a = 1; }`, new: `message M { string b = 1; }`, want: []string{compat.FieldRenamed}},
	{name: "field renamed FORWARD", level: compat.Forward, old: `message M { string a = 1; }`, new: `message M { string b = 1; }`, want: []string{compat.FieldRenamed}},
	{name: "field number changed", old: `message M { string a = 1; }`, new: `message M { string a = 2; }`, want: []string{compat.FieldNumberChanged}},
	{name: "two fields swap numbers", old: `message M { string a = 1; string b = 2; }`, new: `message M { string a = 2; string b = 1; }`,
		want: []string{compat.FieldRenamed}},

	// Types.
	{name: "int32 to string", old: `message M { int32 a = 1; }`, new: `message M { string a = 1; }`, want: []string{compat.FieldTypeChanged}},
	{name: "int32 to int64", old: `message M { int32 a = 1; }`, new: `message M { int64 a = 1; }`, want: []string{compat.FieldTypeWidened}},
	{name: "int32 to int64 BACKWARD", level: compat.Backward, old: `message M { int32 a = 1; }`, new: `message M { int64 a = 1; }`},
	{name: "int32 to int64 FORWARD", level: compat.Forward, old: `message M { int32 a = 1; }`, new: `message M { int64 a = 1; }`, want: []string{compat.FieldTypeWidened}},
	{name: "int64 to int32", old: `message M { int64 a = 1; }`, new: `message M { int32 a = 1; }`, want: []string{compat.FieldTypeNarrowed}},
	{name: "int64 to int32 BACKWARD", level: compat.Backward, old: `message M { int64 a = 1; }`, new: `message M { int32 a = 1; }`, want: []string{compat.FieldTypeNarrowed}},
	{name: "int64 to int32 FORWARD", level: compat.Forward, old: `message M { int64 a = 1; }`, new: `message M { int32 a = 1; }`},
	{name: "uint32 to uint64", old: `message M { uint32 a = 1; }`, new: `message M { uint64 a = 1; }`, want: []string{compat.FieldTypeWidened}},
	{name: "uint32 to int64", old: `message M { uint32 a = 1; }`, new: `message M { int64 a = 1; }`, want: []string{compat.FieldTypeWidened}},
	{name: "sint32 to sint64", old: `message M { sint32 a = 1; }`, new: `message M { sint64 a = 1; }`, want: []string{compat.FieldTypeWidened}},
	{name: "int32 to uint32", old: `message M { int32 a = 1; }`, new: `message M { uint32 a = 1; }`, want: []string{compat.FieldTypeChanged}},
	{name: "int32 to sint32", old: `message M { int32 a = 1; }`, new: `message M { sint32 a = 1; }`, want: []string{compat.FieldTypeChanged}},
	{name: "int64 to uint64", old: `message M { int64 a = 1; }`, new: `message M { uint64 a = 1; }`, want: []string{compat.FieldTypeChanged}},
	{name: "string to bytes", old: `message M { string a = 1; }`, new: `message M { bytes a = 1; }`, want: []string{compat.FieldTypeChanged}},
	{name: "bytes to string", old: `message M { bytes a = 1; }`, new: `message M { string a = 1; }`, want: []string{compat.FieldTypeChanged}},
	{name: "fixed32 to sfixed32", old: `message M { fixed32 a = 1; }`, new: `message M { sfixed32 a = 1; }`, want: []string{compat.FieldTypeChanged}},
	{name: "fixed32 to fixed64", old: `message M { fixed32 a = 1; }`, new: `message M { fixed64 a = 1; }`, want: []string{compat.FieldTypeChanged}},
	{name: "float to double", old: `message M { float a = 1; }`, new: `message M { double a = 1; }`, want: []string{compat.FieldTypeChanged}},
	{name: "bool to int32", old: `message M { bool a = 1; }`, new: `message M { int32 a = 1; }`, want: []string{compat.FieldTypeChanged}},
	{name: "int32 to enum", old: `enum K { K_UNSPECIFIED = 0; } message M { int32 a = 1; }`, new: `enum K { K_UNSPECIFIED = 0; } message M { K a = 1; }`,
		want: []string{compat.FieldTypeChanged}},
	{name: "string to message", old: `message N { string s = 1; } message M { string a = 1; }`, new: `message N { string s = 1; } message M { N a = 1; }`,
		want: []string{compat.FieldTypeChanged}},
	{name: "message type changed", old: `message A { string s = 1; } message B { string s = 1; } message M { A a = 1; }`,
		new: `message A { string s = 1; } message B { string s = 1; } message M { B a = 1; }`, want: []string{compat.FieldTypeChanged}},
	{name: "enum type changed", old: `enum K { K_UNSPECIFIED = 0; } enum L { L_UNSPECIFIED = 0; } message M { K a = 1; }`,
		new: `enum K { K_UNSPECIFIED = 0; } enum L { L_UNSPECIFIED = 0; } message M { L a = 1; }`, want: []string{compat.FieldTypeChanged}},
	{name: "well-known type changed", old: "import \"google/protobuf/timestamp.proto\";\nimport \"google/protobuf/duration.proto\";\nmessage M { google.protobuf.Timestamp a = 1; }",
		new: "import \"google/protobuf/timestamp.proto\";\nimport \"google/protobuf/duration.proto\";\nmessage M { google.protobuf.Duration a = 1; }", want: []string{compat.FieldTypeChanged}},
	{name: "singular to repeated", old: `message M { string a = 1; }`, new: `message M { repeated string a = 1; }`, want: []string{compat.FieldCardinalityChanged}},
	{name: "repeated to singular", old: `message M { repeated int32 a = 1; }`, new: `message M { int32 a = 1; }`, want: []string{compat.FieldCardinalityChanged}},
	{name: "repeated message to map", old: `message M { message E { string key = 1; int32 value = 2; } repeated E a = 1; }`,
		new: `message M { message E { string key = 1; int32 value = 2; } map<string, int32> a = 1; }`, want: []string{compat.FieldTypeChanged}},
	{name: "map value type changed", old: `message M { map<string, int32> m = 1; }`, new: `message M { map<string, string> m = 1; }`, want: []string{compat.FieldTypeChanged}},
	{name: "map key widened", old: `message M { map<int32, string> m = 1; }`, new: `message M { map<int64, string> m = 1; }`, want: []string{compat.FieldTypeWidened}},
	{name: "nested message field changed", old: `message M { message N { int32 x = 1; } N n = 1; }`, new: `message M { message N { string x = 1; } N n = 1; }`,
		want: []string{compat.FieldTypeChanged}},

	// Deleted and moved types.
	{name: "message deleted", old: `message M { string a = 1; } message N { int32 x = 1; }`, new: `message M { string a = 1; }`, want: []string{compat.MessageDeleted}},
	{name: "message renamed", old: `message M { string a = 1; }`, new: `message M2 { string a = 1; }`, want: []string{compat.MessageDeleted}},
	{name: "nested message deleted", old: `message M { message N { int32 x = 1; } }`, new: `message M { }`, want: []string{compat.MessageDeleted}},
	{name: "message moved into another", old: `message M { } message N { int32 x = 1; }`, new: `message M { message N { int32 x = 1; } }`, want: []string{compat.MessageDeleted}},
	{name: "enum deleted", old: `enum K { K_UNSPECIFIED = 0; } message M { }`, new: `message M { }`, want: []string{compat.EnumDeleted}},
	{name: "nested enum deleted", old: `message M { enum K { K_UNSPECIFIED = 0; } }`, new: `message M { }`, want: []string{compat.EnumDeleted}},
	{name: "deleted message BACKWARD", level: compat.Backward, old: `message M { } message N { }`, new: `message M { }`, want: []string{compat.MessageDeleted}},
	{name: "package changed", old: "syntax = \"proto3\";\npackage a.v1;\nmessage M { string a = 1; }", new: "syntax = \"proto3\";\npackage b.v1;\nmessage M { string a = 1; }",
		want: []string{compat.PackageChanged}},
	{name: "package changed with own types referenced", old: "syntax = \"proto3\";\npackage a.v1;\nmessage N { } message M { N n = 1; }",
		new: "syntax = \"proto3\";\npackage b.v1;\nmessage N { } message M { N n = 1; }", want: []string{compat.PackageChanged}},
	{name: "package changed and field deleted", old: "syntax = \"proto3\";\npackage a.v1;\nmessage M { string a = 1; int32 b = 2; }",
		new:  "syntax = \"proto3\";\npackage b.v1;\nmessage M { string a = 1; }",
		want: []string{compat.FieldDeletedNameUnreserved, compat.FieldDeletedNumberUnreserved, compat.PackageChanged}},
	{name: "package added", old: "syntax = \"proto3\";\nmessage M { string a = 1; }", new: "syntax = \"proto3\";\npackage b.v1;\nmessage M { string a = 1; }",
		want: []string{compat.PackageChanged}},

	// Enum values.
	{name: "enum value deleted", old: `enum K { K_UNSPECIFIED = 0; X = 1; }`, new: `enum K { K_UNSPECIFIED = 0; }`,
		want: []string{compat.EnumValueDeletedNameUnreserved, compat.EnumValueDeletedNumberUnreserved}},
	{name: "enum value deleted number reserved", old: `enum K { K_UNSPECIFIED = 0; X = 1; }`, new: `enum K { K_UNSPECIFIED = 0; reserved 1; }`,
		want: []string{compat.EnumValueDeletedNameUnreserved}},
	{name: "enum value deleted both reserved", old: `enum K { K_UNSPECIFIED = 0; X = 1; }`, new: `enum K { K_UNSPECIFIED = 0; reserved 1; reserved "X"; }`},
	{name: "enum value deleted number reserved FORWARD", level: compat.Forward, old: `enum K { K_UNSPECIFIED = 0; X = 1; }`, new: `enum K { K_UNSPECIFIED = 0; reserved 1; }`},
	{name: "enum value renamed", old: `enum K { K_UNSPECIFIED = 0; X = 1; }`, new: `enum K { K_UNSPECIFIED = 0; Y = 1; }`, want: []string{compat.EnumValueRenamed}},
	{name: "enum value renamed keeping an alias", old: `enum K { K_UNSPECIFIED = 0; X = 1; }`, new: `enum K { option allow_alias = true; K_UNSPECIFIED = 0; Y = 1; X = 1; }`},
	{name: "enum value number changed", old: `enum K { K_UNSPECIFIED = 0; X = 1; }`, new: `enum K { K_UNSPECIFIED = 0; X = 2; }`, want: []string{compat.EnumValueNumberChanged}},

	// Oneofs.
	{name: "two fields merged into new oneof", old: `message M { string a = 1; int32 b = 2; }`, new: `message M { oneof o { string a = 1; int32 b = 2; } }`,
		want: []string{compat.OneofFieldsMerged}},
	{name: "two fields merged BACKWARD", level: compat.Backward, old: `message M { string a = 1; int32 b = 2; }`, new: `message M { oneof o { string a = 1; int32 b = 2; } }`,
		want: []string{compat.OneofFieldsMerged}},
	{name: "two fields merged FORWARD", level: compat.Forward, old: `message M { string a = 1; int32 b = 2; }`, new: `message M { oneof o { string a = 1; int32 b = 2; } }`},
	{name: "field moved into existing oneof", old: `message M { oneof o { string a = 1; } int32 b = 2; }`, new: `message M { oneof o { string a = 1; int32 b = 2; } }`,
		want: []string{compat.OneofFieldsMerged}},
	{name: "oneof dissolved", old: `message M { oneof o { string a = 1; int32 b = 2; } }`, new: `message M { string a = 1; int32 b = 2; }`,
		want: []string{compat.OneofFieldsSplit}},
	{name: "oneof dissolved BACKWARD", level: compat.Backward, old: `message M { oneof o { string a = 1; int32 b = 2; } }`, new: `message M { string a = 1; int32 b = 2; }`},
	{name: "oneofs merged", old: `message M { oneof o { string a = 1; } oneof p { int32 b = 2; } }`, new: `message M { oneof o { string a = 1; int32 b = 2; } }`,
		want: []string{compat.OneofFieldsMerged}},
	{name: "proto3 optional fields are not oneofs", old: `message M { optional string a = 1; optional int32 b = 2; }`, new: `message M { optional string a = 1; optional int32 b = 2; }`},

	// proto2 required.
	{name: "proto2 field became required", old: proto2Header + `message M { optional string a = 1; }`, new: proto2Header + `message M { required string a = 1; }`,
		want: []string{compat.FieldRequiredAdded}},
	{name: "proto2 field became required FORWARD", level: compat.Forward, old: proto2Header + `message M { optional string a = 1; }`, new: proto2Header + `message M { required string a = 1; }`},
	{name: "proto2 required field added", level: compat.Backward, old: proto2Header + `message M { optional string a = 1; }`, new: proto2Header + `message M { optional string a = 1; required int32 b = 2; }`,
		want: []string{compat.FieldRequiredAdded}},
	{name: "proto2 required became optional", old: proto2Header + `message M { required string a = 1; }`, new: proto2Header + `message M { optional string a = 1; }`,
		want: []string{compat.FieldRequiredRemoved}},
	{name: "proto2 required became optional BACKWARD", level: compat.Backward, old: proto2Header + `message M { required string a = 1; }`, new: proto2Header + `message M { optional string a = 1; }`},
	{name: "proto2 required field deleted with reservation", old: proto2Header + `message M { required string a = 1; }`, new: proto2Header + `message M { reserved 1; reserved "a"; }`,
		want: []string{compat.FieldRequiredRemoved}},

	// NONE checks nothing.
	{name: "NONE ignores wire breaks", level: compat.None, old: `message M { string a = 1; } message N { }`, new: `message M { int32 b = 1; }`},
	{name: "NONE ignores contract breaks", level: compat.None, old: contractBase, new: replace(contractBase, `id:{id}`, `id:{id}:{n}`)},

	// Contract: events.
	{name: "contract unchanged", old: contractBase, new: contractBase},
	{name: "biz_key changed", old: contractBase, new: replace(contractBase, `id:{id}`, `id:{id}:{n}`), want: []string{compat.EventBizKeyChanged}},
	{name: "biz_key changed BACKWARD", level: compat.Backward, old: contractBase, new: replace(contractBase, `id:{id}`, `{id}`), want: []string{compat.EventBizKeyChanged}},
	{name: "biz_key changed FORWARD", level: compat.Forward, old: contractBase, new: replace(contractBase, `id:{id}`, `{id}`), want: []string{compat.EventBizKeyChanged}},
	{name: "biz_key changed BACKWARD_TRANSITIVE", level: compat.BackwardTransitive, old: contractBase, new: replace(contractBase, `id:{id}`, `{id}`), want: []string{compat.EventBizKeyChanged}},
	{name: "topic changed", old: contractBase, new: replace(contractBase, `topic: "orders"`, `topic: "orders-v2"`), want: []string{compat.EventTopicChanged}},
	{name: "event type changed", old: contractBase, new: replace(contractBase, `E_DONE`, `E_FINISHED`), want: []string{compat.EventTypeChanged}},
	{name: "event option removed", old: contractBase,
		new:  replace(contractBase, "  option (msgcontract.v1.event) = {\n    topic: \"orders\" event_type: \"E_DONE\" biz_key: \"id:{id}\" target_state: \"S.B\"\n  };\n", ""),
		want: []string{compat.EventRemoved}},
	{name: "event option added", old: defaults + states + "message F { string id = 1; }", new: defaults + states + replace(event, "message E", "message F")[0:0] +
		"message F {\n  option (msgcontract.v1.event) = { topic: \"o\" event_type: \"F\" biz_key: \"{id}\" };\n  string id = 1;\n}"},
	{name: "target state changed", old: contractBase, new: replace(contractBase, `"S.B"`, `"S.C"`), want: []string{compat.EventTargetStateChanged}},
	{name: "target state added", old: replace(contractBase, ` target_state: "S.B"`, ``), new: contractBase, want: []string{compat.EventTargetStateChanged}},
	{name: "retry policy changed", old: contractBase,
		new: replace(contractBase, `unclassified: RETRYABLE`, "unclassified: RETRYABLE\n  retry: { base_delay: \"2s\" multiplier: 3 max_retries: 3 }")},
	{name: "event message deleted", old: contractBase, new: defaults + states, want: []string{compat.MessageDeleted}},
	{name: "event field renamed under biz_key", old: contractBase,
		new: replace(contractBase, `string id = 1;`, `string key = 1;`, `id:{id}`, `id:{key}`), want: []string{compat.EventBizKeyChanged, compat.FieldRenamed}},

	// Contract: error classification.
	{name: "range flipped to non-retryable", old: contractBase, new: replace(contractBase, `to: 59999 retryable: true`, `to: 59999 retryable: false`),
		want: []string{compat.ErrorCodeReclassified}},
	{name: "range renamed", old: contractBase, new: replace(contractBase, `name: "system"`, `name: "infrastructure"`)},
	{name: "range split with same classification", old: contractBase,
		new: replace(contractBase, `{ from: 50000 to: 59999 retryable: true name: "system" }`, `{ from: 50000 to: 54999 retryable: true name: "db" }, { from: 55000 to: 59999 retryable: true name: "net" }`)},
	{name: "range shrunk into retryable unclassified", old: contractBase, new: replace(contractBase, `to: 59999`, `to: 54999`)},
	{name: "range shrunk into non-retryable unclassified", old: replace(contractBase, `unclassified: RETRYABLE`, `unclassified: NON_RETRYABLE`),
		new: replace(contractBase, `unclassified: RETRYABLE`, `unclassified: NON_RETRYABLE`, `to: 59999`, `to: 54999`), want: []string{compat.ErrorCodeReclassified}},
	{name: "range grew over retryable codes", old: contractBase, new: replace(contractBase, `to: 49999`, `to: 49999`, `from: 40000`, `from: 30000`),
		want: []string{compat.ErrorCodeReclassified}},
	{name: "unclassified flipped", old: contractBase, new: replace(contractBase, `unclassified: RETRYABLE`, `unclassified: NON_RETRYABLE`),
		want: []string{compat.ErrorCodeReclassified}},
	{name: "new range matching unclassified", old: contractBase,
		new: replace(contractBase, `name: "system" }`, `name: "system" }, { from: 70000 to: 70999 retryable: true name: "other" }`)},
	{name: "new range differing from unclassified", old: contractBase,
		new: replace(contractBase, `name: "system" }`, `name: "system" }, { from: 70000 to: 70999 retryable: false name: "other" }`), want: []string{compat.ErrorCodeReclassified}},
	{name: "non-retryable range removed", old: contractBase,
		new: replace(contractBase, `{ from: 40000 to: 49999 retryable: false name: "business" },`, ``), want: []string{compat.ErrorCodeReclassified}},
	{name: "retryable range removed under retryable unclassified", old: contractBase,
		new: replace(contractBase, `,
    { from: 50000 to: 59999 retryable: true name: "system" }`, ``)},
	{name: "reclassification FORWARD", level: compat.Forward, old: contractBase, new: replace(contractBase, `to: 59999 retryable: true`, `to: 59999 retryable: false`),
		want: []string{compat.ErrorCodeReclassified}},

	// Contract: state machines.
	{name: "transition removed", old: contractBase, new: replace(contractBase, `from: ["A", "B"]`, `from: ["B"]`), want: []string{compat.StateTransitionRemoved}},
	{name: "transition removed BACKWARD", level: compat.Backward, old: contractBase, new: replace(contractBase, `from: ["A", "B"]`, `from: ["B"]`), want: []string{compat.StateTransitionRemoved}},
	{name: "transition added", old: contractBase, new: replace(contractBase, `from: ["A"] }`, `from: ["A", "C"] }`)},
	{name: "state added", old: contractBase, new: replace(contractBase, "  C = 3", "  D = 4 [(msgcontract.v1.transition) = { from: [\"C\"] }];\n  C = 3")},
	{name: "state deleted", old: contractBase, new: replace(contractBase, "  C = 3 [(msgcontract.v1.transition) = { from: [\"A\", \"B\"] }];\n", ""),
		want: []string{compat.EnumValueDeletedNameUnreserved, compat.EnumValueDeletedNumberUnreserved, compat.StateTransitionRemoved}},
	{name: "state machine option removed", old: contractBase,
		new:  replace(contractBase, "  option (msgcontract.v1.state_machine) = {};\n", "", ` target_state: "S.B"`, ``, ` [(msgcontract.v1.transition) = { from: ["A"] }]`, ``, ` [(msgcontract.v1.transition) = { from: ["A", "B"] }]`, ``),
		want: []string{compat.EventTargetStateChanged, compat.StateMachineRemoved}},
}

func TestCheck(t *testing.T) {
	t.Parallel()
	if len(cases) < 80 {
		t.Fatalf("want at least 80 compatibility cases, have %d", len(cases))
	}
	seen := map[string]bool{}
	for _, tc := range cases {
		if seen[tc.name] {
			t.Fatalf("duplicate case name %q", tc.name)
		}
		seen[tc.name] = true
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			level := tc.level
			if level == "" {
				level = compat.Full
			}
			vs := compat.CheckLevel(level, []*model.Set{load(t, tc.old)}, load(t, tc.new))
			var got []string
			for _, v := range vs {
				if !slices.Contains(got, v.Rule.ID) {
					got = append(got, v.Rule.ID)
				}
				if v.Pos.File != "t.proto" || v.Pos.Line <= 0 || v.Pos.Col <= 0 {
					t.Errorf("violation without a position in the new schema: %v", v)
				}
				if _, ok := compat.LookupRule(v.Rule.ID); !ok {
					t.Errorf("unregistered rule %s", v.Rule.ID)
				}
			}
			slices.Sort(got)
			want := slices.Clone(tc.want)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("level %s: got rules %v, want %v\nviolations:\n%s", level, got, want, lines(vs))
			}
		})
	}
}

func lines(vs []compat.Violation) string {
	var b strings.Builder
	for _, v := range vs {
		fmt.Fprintln(&b, v)
	}
	return b.String()
}
