// Package event is the seam between generated code and the runtime: a Spec
// describes one contract event (where it goes, how it is retried and
// classified), and NewEnvelope wraps a payload the way every producer must.
package event

import (
	"crypto/rand"
	"encoding/hex"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/msgcontract/msgcontract/runtime-go/backoff"
	"github.com/msgcontract/msgcontract/runtime-go/classify"
	"github.com/msgcontract/msgcontract/runtime-go/envelope"
	"github.com/msgcontract/msgcontract/runtime-go/envelopepb"
)

// Spec is one event's contract as data. Generated code declares one per
// event; the runtime reads nothing else.
type Spec struct {
	// FullName is the payload message's full proto name.
	FullName  string
	Topic     string
	EventType string
	// Subject is the schema-registry subject of the payload's contract.
	Subject       string
	SchemaVersion int32
	Policy        backoff.Policy
	Rules         classify.Rules
}

// Options adjust NewEnvelope.
type Options struct {
	// MessageID defaults to 32 random hex digits.
	MessageID string
	// OccurredAt defaults to now.
	OccurredAt time.Time
	// JSON encodes the payload as proto JSON with proto field names
	// instead of binary protobuf (envelope.EncodePayload).
	JSON bool
	// Traceparent and Tracestate carry W3C trace context.
	Traceparent, Tracestate string
}

// NewEnvelope wraps payload, whose business key bizKey the producer has
// rendered from the contract template.
func NewEnvelope(spec *Spec, payload proto.Message, bizKey string, opts Options) (*envelopepb.Envelope, error) {
	body, ct, err := envelope.EncodePayload(payload, opts.JSON)
	if err != nil {
		return nil, err
	}
	id := opts.MessageID
	if id == "" {
		id = NewMessageID()
	}
	at := opts.OccurredAt
	if at.IsZero() {
		at = time.Now()
	}
	env := &envelopepb.Envelope{
		MessageId:     id,
		BizKey:        bizKey,
		EventType:     spec.EventType,
		SchemaSubject: spec.Subject,
		SchemaVersion: spec.SchemaVersion,
		OccurredAt:    at.UnixMilli(),
		ContentType:   ct,
		Payload:       body,
		Topic:         spec.Topic,
	}
	if opts.Traceparent != "" || opts.Tracestate != "" {
		env.Trace = &envelopepb.TraceContext{Traceparent: opts.Traceparent, Tracestate: opts.Tracestate}
	}
	return env, nil
}

// NewMessageID returns 32 random hex digits.
func NewMessageID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
