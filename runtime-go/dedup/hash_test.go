package dedup_test

import (
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/msgcontract/msgcontract/runtime-go/dedup"
)

// One message hashes the same whether it came as binary or as proto JSON,
// whatever the map order or unknown fields of its encoding; a changed
// field hashes differently.
func TestHashMessage(t *testing.T) {
	t.Parallel()
	hash := func(m proto.Message) string {
		t.Helper()
		h, err := dedup.HashMessage(m)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	fromJSON := func(s string) *structpb.Struct {
		t.Helper()
		m := &structpb.Struct{}
		if err := protojson.Unmarshal([]byte(s), m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	a := fromJSON(`{"b": 2, "a": "x", "c": [true, null]}`)
	b := fromJSON(`{ "c": [true, null], "a": "x", "b": 2 }`)
	bin, err := proto.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	c := &structpb.Struct{}
	// Unknown field 99 (varint 1) appended to the binary form.
	if err := proto.Unmarshal(append(bin, 0x98, 0x06, 0x01), c); err != nil {
		t.Fatal(err)
	}
	if ha, hb, hc := hash(a), hash(b), hash(c); ha != hb || ha != hc {
		t.Errorf("one message, three hashes: %s %s %s", ha, hb, hc)
	}
	// Unknown fields below the top level (in a map value, a list element
	// and a message field) are dropped too.
	nested := fromJSON(`{"b": 2, "a": "x", "c": [true, null]}`)
	unknown := []byte{0x98, 0x06, 0x01}
	nested.Fields["b"].ProtoReflect().SetUnknown(unknown)
	nested.Fields["c"].GetListValue().Values[0].ProtoReflect().SetUnknown(unknown)
	nested.Fields["c"].GetListValue().ProtoReflect().SetUnknown(unknown)
	if hn := hash(nested); hn != hash(a) {
		t.Errorf("nested unknown fields changed the hash: %s, want %s", hn, hash(a))
	}
	if hash(a) == hash(fromJSON(`{"b": 3, "a": "x", "c": [true, null]}`)) {
		t.Error("a changed field kept the hash")
	}
	// The empty message is the SHA-256 of no bytes.
	if got := hash(&wrapperspb.StringValue{}); got != "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" {
		t.Errorf("empty message hash = %s", got)
	}
}
