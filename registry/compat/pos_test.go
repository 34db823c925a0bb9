package compat_test

import (
	"strings"
	"testing"

	"github.com/msgcontract/msgcontract/codegen/model"
	"github.com/msgcontract/msgcontract/registry/compat"
)

// at is the position of the first occurrence of marker in the schema load
// compiles for body (header included).
func at(t *testing.T, body, marker string) model.Pos {
	t.Helper()
	src := body
	if !strings.HasPrefix(src, "syntax") {
		src = header + body
	}
	i := strings.Index(src, marker)
	if i < 0 {
		t.Fatalf("marker %q not in schema", marker)
	}
	line := strings.Count(src[:i], "\n") + 1
	col := i - strings.LastIndex(src[:i], "\n")
	return model.Pos{File: "t.proto", Line: line, Col: col}
}

// TestPositions pins where violations point: the changed element itself,
// or the message or enum an element was deleted from.
func TestPositions(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, old, new, rule, marker string
	}{
		{"field type", `message M { int32 a = 1; }`, "message M {\n  string a = 1;\n}", compat.FieldTypeChanged, "string a"},
		{"field renamed", `message M { int32 a = 1; }`, "message M {\n  int32 b = 1;\n}", compat.FieldRenamed, "int32 b"},
		{"field deleted", `message M { int32 a = 1; int32 b = 2; }`, "message M {\n  int32 a = 1;\n}", compat.FieldDeletedNumberUnreserved, "message M"},
		{"nested message deleted", `message M { message N {} }`, "message X {}\nmessage M {\n}", compat.MessageDeleted, "message M"},
		{"top-level message deleted", `message M {} message N {}`, "message M {}\n", compat.MessageDeleted, "package t.v1;"},
		{"enum value renamed", `enum K { K_UNSPECIFIED = 0; X = 1; }`, "enum K {\n  K_UNSPECIFIED = 0;\n  Y = 1;\n}", compat.EnumValueRenamed, "Y = 1"},
		{"oneof merged", `message M { int32 a = 1; int32 b = 2; }`, "message M {\n  oneof o {\n    int32 a = 1;\n    int32 b = 2;\n  }\n}", compat.OneofFieldsMerged, "oneof o"},
		{"biz_key", contractBase, replace(contractBase, `id:{id}`, `id:{id}:{n}`), compat.EventBizKeyChanged, `"id:{id}:{n}"`},
		{"topic", contractBase, replace(contractBase, `"orders"`, `"orders-v2"`), compat.EventTopicChanged, `"orders-v2"`},
		{"target state", contractBase, replace(contractBase, `"S.B"`, `"S.C"`), compat.EventTargetStateChanged, `"S.C"`},
		{"reclassified range", contractBase, replace(contractBase, `to: 59999 retryable: true`, `to: 59999 retryable: false`), compat.ErrorCodeReclassified, "{ from: 50000"},
		{"transition", contractBase, replace(contractBase, `from: ["A", "B"]`, `from: ["B"]`), compat.StateTransitionRemoved, "C = 3"},
		{"package", "syntax = \"proto3\";\npackage a;\nmessage M {}", "syntax = \"proto3\";\n\npackage b;\nmessage M {}", compat.PackageChanged, "package b;"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			want := at(t, tc.new, tc.marker)
			for _, v := range compat.Check(load(t, tc.old), load(t, tc.new), compat.BothWays) {
				if v.Rule.ID != tc.rule {
					continue
				}
				if v.Pos != want {
					t.Fatalf("%s at %v, want %v (%q)", tc.rule, v.Pos, want, tc.marker)
				}
				return
			}
			t.Fatalf("no %s", tc.rule)
		})
	}
}
