package envelope_test

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/msgcontract/msgcontract/runtime-go/envelope"
	"github.com/msgcontract/msgcontract/runtime-go/envelopepb"
)

// The payload codec is tested with the envelope message itself as a
// payload: it has strings, numbers and a nested message.
func TestPayloadRoundTrip(t *testing.T) {
	in := &envelopepb.Envelope{MessageId: "m1", BizKey: "order:1", SchemaVersion: 3,
		Trace: &envelopepb.TraceContext{Traceparent: "00-aa-bb-01"}}
	for _, tc := range []struct {
		asJSON bool
		ct     string
	}{{false, envelope.ContentTypeProto}, {true, envelope.ContentTypeJSON}} {
		b, ct, err := envelope.EncodePayload(in, tc.asJSON)
		if err != nil || ct != tc.ct {
			t.Fatalf("json=%v: content type %q, err %v; want %q", tc.asJSON, ct, err, tc.ct)
		}
		if tc.asJSON && !strings.Contains(string(b), `"biz_key"`) {
			t.Errorf("JSON payload %s does not use proto field names", b)
		}
		out := &envelopepb.Envelope{}
		if err := envelope.DecodePayload(&envelopepb.Envelope{ContentType: ct, Payload: b}, out); err != nil {
			t.Fatalf("json=%v: decode: %v", tc.asJSON, err)
		}
		if !proto.Equal(in, out) {
			t.Errorf("json=%v: round trip gave %v, want %v", tc.asJSON, out, in)
		}
	}
}

func TestDecodePayloadIgnoresUnknownJSONFields(t *testing.T) {
	out := &envelopepb.Envelope{}
	env := &envelopepb.Envelope{ContentType: envelope.ContentTypeJSON, Payload: []byte(`{"biz_key":"k","added_later":1}`)}
	if err := envelope.DecodePayload(env, out); err != nil || out.GetBizKey() != "k" {
		t.Fatalf("got %v, %v; want biz_key k and no error (a newer producer's field is ignored)", out, err)
	}
}

func TestMarshalPayloadForDisplayShowsZeroFields(t *testing.T) {
	b, err := envelope.MarshalPayloadForDisplay(&envelopepb.Envelope{BizKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"message_id"`) {
		t.Errorf("display JSON %s leaves out unset fields", b)
	}
}
