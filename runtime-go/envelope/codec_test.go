package envelope_test

import (
	"bytes"
	"errors"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/msgcontract/msgcontract/runtime-go/envelope"
	"github.com/msgcontract/msgcontract/runtime-go/envelopepb"
)

func sample() *envelopepb.Envelope {
	return &envelopepb.Envelope{
		MessageId: "m1", BizKey: "order_id:1:PAY", EventType: "PAY_SUCCESS",
		SchemaSubject: "shop.v1", SchemaVersion: 3, OccurredAt: 1700000000000,
		RetryCount: 2, NotBefore: 1700000001000,
		LastError:   &envelopepb.LastError{Code: 50001, Message: "db down", Retryable: true, Range: "system", FailedAt: 1700000000500},
		Trace:       &envelopepb.TraceContext{Traceparent: "00-abc-def-01"},
		ContentType: "application/protobuf", Payload: []byte{1, 2, 3}, Topic: "order-event",
		FirstFailedAt: 1700000000100,
	}
}

func TestRoundTrip(t *testing.T) {
	t.Parallel()
	env := sample()
	b, err := envelope.Marshal(env)
	if err != nil {
		t.Fatal(err)
	}
	b2, _ := envelope.Marshal(env)
	if !bytes.Equal(b, b2) {
		t.Fatal("Marshal is not deterministic")
	}
	got, err := envelope.Unmarshal(b)
	if err != nil || !proto.Equal(got, env) {
		t.Fatalf("binary round trip: %v %v", got, err)
	}
	j, err := envelope.MarshalJSON(env)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{`"biz_key"`, `"retry_count"`, `"not_before"`, `"last_error"`, `"first_failed_at"`} {
		if !bytes.Contains(j, []byte(name)) {
			t.Errorf("JSON %s lacks proto name %s", j, name)
		}
	}
	got, err = envelope.UnmarshalJSON(j)
	if err != nil || !proto.Equal(got, env) {
		t.Fatalf("JSON round trip: %v %v", got, err)
	}
}

func TestDecodeErrors(t *testing.T) {
	t.Parallel()
	noKey, _ := envelope.Marshal(&envelopepb.Envelope{EventType: "X"})
	for name, in := range map[string][]byte{
		"garbage": {0xff, 0xff, 0xff},
		"no key":  noKey,
		"empty":   nil,
	} {
		if _, err := envelope.Unmarshal(in); !errors.Is(err, envelope.ErrDecode) {
			t.Errorf("%s: err = %v, want ErrDecode", name, err)
		}
	}
	if _, err := envelope.UnmarshalJSON([]byte("{")); !errors.Is(err, envelope.ErrDecode) {
		t.Errorf("bad JSON: err = %v", err)
	}
}
