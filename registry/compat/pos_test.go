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
		// inOld: the marker is in the previous version (deleted types).
		inOld bool
	}{
		{"field type", `message M { int32 a = 1; }`, "message M {\n  string a = 1;\n}", compat.FieldTypeChanged, "string a", false},
		{"field renamed", `message M { int32 a = 1; }`, "message M {\n  int32 b = 1;\n}", compat.FieldRenamed, "int32 b", false},
		{"field deleted", `message M { int32 a = 1; int32 b = 2; }`, "message M {\n  int32 a = 1;\n}", compat.FieldDeletedNumberUnreserved, "message M", false},
		{"nested message deleted", "message M {\n  message N {}\n}", "message X {}\nmessage M {\n}", compat.MessageDeleted, "message N", true},
		{"top-level message deleted", "message M {}\nmessage N {}", "message M {}\n", compat.MessageDeleted, "message N", true},
		{"enum value alias deleted", "enum K {\n  option allow_alias = true;\n  K_UNSPECIFIED = 0;\n  X = 1;\n  Y = 1;\n}", "enum K {\n  K_UNSPECIFIED = 0;\n  X = 1;\n}", compat.EnumValueDeletedNameUnreserved, "enum K", false},
		{"reservation removed", "message M {\n  reserved 2;\n}", "message M {\n}", compat.ReservedNumberRemoved, "message M", false},
		{"enum value renamed", `enum K { K_UNSPECIFIED = 0; X = 1; }`, "enum K {\n  K_UNSPECIFIED = 0;\n  Y = 1;\n}", compat.EnumValueRenamed, "Y = 1", false},
		{"oneof merged", `message M { int32 a = 1; int32 b = 2; }`, "message M {\n  oneof o {\n    int32 a = 1;\n    int32 b = 2;\n  }\n}", compat.OneofFieldsMerged, "oneof o", false},
		{"biz_key", contractBase, replace(contractBase, `id:{id}`, `id:{id}:{n}`), compat.EventBizKeyChanged, `"id:{id}:{n}"`, false},
		{"topic", contractBase, replace(contractBase, `"orders"`, `"orders-v2"`), compat.EventTopicChanged, `"orders-v2"`, false},
		{"target state", contractBase, replace(contractBase, `"S.B"`, `"S.C"`), compat.EventTargetStateChanged, `"S.C"`, false},
		{"reclassified range", contractBase, replace(contractBase, `to: 59999 retryable: true`, `to: 59999 retryable: false`), compat.ErrorCodeReclassified, "{ from: 50000", false},
		{"transition", contractBase, replace(contractBase, `from: ["A", "B"]`, `from: ["B"]`), compat.StateTransitionRemoved, "C = 3", false},
		{"package", "syntax = \"proto3\";\npackage a;\nmessage M {}", "syntax = \"proto3\";\n\npackage b;\nmessage M {}", compat.PackageChanged, "package b;", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			src := tc.new
			if tc.inOld {
				src = tc.old
			}
			want := at(t, src, tc.marker)
			for _, v := range compat.Check(load(t, tc.old), load(t, tc.new), compat.BothWays) {
				if v.Rule.ID != tc.rule {
					continue
				}
				if v.Pos != want || v.Previous != tc.inOld {
					t.Fatalf("%s at %v (previous %v), want %v (%q, previous %v)", tc.rule, v.Pos, v.Previous, want, tc.marker, tc.inOld)
				}
				return
			}
			t.Fatalf("no %s", tc.rule)
		})
	}
}
