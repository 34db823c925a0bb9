package compat_test

import (
	"bytes"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/msgcontract/msgcontract/codegen/model"
	"github.com/msgcontract/msgcontract/registry/compat"
)

// The tests here back the decisions in docs/DESIGN.md ("Compatibility
// decisions") where msgcontract differs from buf or Confluent on purpose:
// each shows what a real reader (protobuf-go's binary and JSON decoders)
// does with data written under the other version.

func message(t *testing.T, set *model.Set, name string) protoreflect.MessageDescriptor {
	t.Helper()
	d, err := set.Registry.FindDescriptorByName(protoreflect.FullName(name))
	if err != nil {
		t.Fatal(err)
	}
	return d.(protoreflect.MessageDescriptor)
}

// writeRead writes value into field a under old, and reads the bytes and
// the JSON back under new.
func writeRead(t *testing.T, old, new protoreflect.MessageDescriptor, value protoreflect.Value) (binary protoreflect.Value, wire []byte, jsonErr error) {
	t.Helper()
	w := dynamicpb.NewMessage(old)
	w.Set(old.Fields().ByName("a"), value)
	wire, err := proto.Marshal(w)
	if err != nil {
		t.Fatal(err)
	}
	r := dynamicpb.NewMessage(new)
	if err := proto.Unmarshal(wire, r); err != nil {
		t.Fatal(err)
	}
	js, err := protojson.Marshal(w)
	if err != nil {
		t.Fatal(err)
	}
	return r.Get(new.Fields().ByName("a")), wire, protojson.Unmarshal(js, dynamicpb.NewMessage(new))
}

// TestSignChangeBreaksReaders: Confluent and buf's WIRE_JSON accept int32
// to uint32 and fixed32 to sfixed32 (one wire type). A real reader does
// not read the same number back: -1 becomes 4294967295 in binary, and
// protojson rejects the old JSON outright. So FIELD_SIGN_CHANGED stays a
// break at every level but NONE.
func TestSignChangeBreaksReaders(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		oldType, newType string
		value            protoreflect.Value
		want             any
	}{
		{"int32", "uint32", protoreflect.ValueOfInt32(-1), uint32(4294967295)},
		{"uint32", "int32", protoreflect.ValueOfUint32(4294967295), int32(-1)},
		{"int64", "uint64", protoreflect.ValueOfInt64(-5), uint64(18446744073709551611)},
		{"fixed32", "sfixed32", protoreflect.ValueOfUint32(4294967295), int32(-1)},
		{"sfixed64", "fixed64", protoreflect.ValueOfInt64(-1), uint64(18446744073709551615)},
	} {
		t.Run(tc.oldType+"->"+tc.newType, func(t *testing.T) {
			t.Parallel()
			old := load(t, "message M { "+tc.oldType+" a = 1; }")
			new := load(t, "message M { "+tc.newType+" a = 1; }")
			got, _, jsonErr := writeRead(t, message(t, old, "t.v1.M"), message(t, new, "t.v1.M"), tc.value)
			if got.Interface() != tc.want {
				t.Errorf("binary: read %v, want %v", got.Interface(), tc.want)
			}
			if jsonErr == nil {
				t.Error("JSON: the new reader accepted a value out of its range")
			}
			vs := compat.Check(old, new, compat.BothWays)
			if len(vs) != 1 || vs[0].Rule.ID != compat.FieldSignChanged {
				t.Errorf("checker: %v, want one %s", vs, compat.FieldSignChanged)
			}
		})
	}
}

// TestOneofMoveInvisibleToReaders: buf's WIRE_JSON flags a single field
// moved into a new oneof (FIELD_SAME_ONEOF); Confluent accepts it
// (ONEOF_ADDED). The bytes and the JSON are the same and a reader reads
// the same value, so it is a CODE rule: only `--code` reports it.
func TestOneofMoveInvisibleToReaders(t *testing.T) {
	t.Parallel()
	old := load(t, "message M { optional string a = 1; }")
	new := load(t, "message M { oneof o { string a = 1; } }")
	got, wire, jsonErr := writeRead(t, message(t, old, "t.v1.M"), message(t, new, "t.v1.M"), protoreflect.ValueOfString("x"))
	if got.String() != "x" || jsonErr != nil {
		t.Fatalf("read %v, JSON error %v", got, jsonErr)
	}
	back, wire2, _ := writeRead(t, message(t, new, "t.v1.M"), message(t, old, "t.v1.M"), protoreflect.ValueOfString("x"))
	if back.String() != "x" || !bytes.Equal(wire, wire2) {
		t.Fatalf("old reader read %v; bytes %x vs %x", back, wire, wire2)
	}
	if vs := compat.Check(old, new, compat.BothWays); len(vs) != 0 {
		t.Errorf("reported at FULL: %v", vs)
	}
	vs := compat.Check(old, new, compat.BothWays|compat.Source)
	if len(vs) != 1 || vs[0].Rule.ID != compat.FieldOneofChanged {
		t.Errorf("with Source: %v, want one %s", vs, compat.FieldOneofChanged)
	}
}

// TestMessageDeletionFollowsConfluent: buf's wire categories accept a
// deleted message; Confluent's checker does not (MESSAGE_REMOVED), because
// a subject's serializers address messages by name and index. The
// registry follows Confluent at every level but NONE.
func TestMessageDeletionFollowsConfluent(t *testing.T) {
	t.Parallel()
	old := load(t, "message M { string a = 1; }\nmessage N { string b = 1; }")
	new := load(t, "message M { string a = 1; }")
	for _, level := range []compat.Level{compat.Backward, compat.Forward, compat.Full} {
		vs := compat.CheckLevel(level, []*model.Set{old}, new)
		if len(vs) != 1 || vs[0].Rule.ID != compat.MessageDeleted || !vs[0].Previous {
			t.Errorf("%s: %v, want one %s in the previous version", level, vs, compat.MessageDeleted)
		}
	}
	// An unused enum is not addressed by serializers: Confluent accepts its
	// deletion (ENUM_REMOVED is compatible), and so do the levels here.
	oldEnum := load(t, "message M { string a = 1; }\nenum K { K_UNSPECIFIED = 0; }")
	if vs := compat.CheckLevel(compat.FullTransitive, []*model.Set{oldEnum}, new); len(vs) != 0 {
		t.Errorf("unused enum deleted: %v", vs)
	}
}
