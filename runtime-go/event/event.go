// Package event is the seam between generated code and the runtime: a Spec
// describes one contract event (where it goes, how it is retried and
// classified), and NewEnvelope wraps a payload the way every producer must.
package event

import (
	"crypto/rand"
	"encoding/hex"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/msgcontract/msgcontract/runtime-go/backoff"
	"github.com/msgcontract/msgcontract/runtime-go/classify"
	"github.com/msgcontract/msgcontract/runtime-go/envelopepb"
)

// Content types of an envelope payload.
const (
	ContentTypeProto = "application/protobuf"
	ContentTypeJSON  = "application/json"
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
	// instead of binary protobuf.
	JSON bool
	// Traceparent and Tracestate carry W3C trace context.
	Traceparent, Tracestate string
}

// NewEnvelope wraps payload, whose business key bizKey the producer has
// rendered from the contract template.
func NewEnvelope(spec *Spec, payload proto.Message, bizKey string, opts Options) (*envelopepb.Envelope, error) {
	var (
		body []byte
		err  error
		ct   = ContentTypeProto
	)
	if opts.JSON {
		ct = ContentTypeJSON
		body, err = protojson.MarshalOptions{UseProtoNames: true}.Marshal(payload)
	} else {
		body, err = proto.MarshalOptions{Deterministic: true}.Marshal(payload)
	}
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

// DecodePayload decodes env's payload into m by its content type.
func DecodePayload(env *envelopepb.Envelope, m proto.Message) error {
	if env.GetContentType() == ContentTypeJSON {
		return protojson.UnmarshalOptions{DiscardUnknown: true}.Unmarshal(env.GetPayload(), m)
	}
	return proto.Unmarshal(env.GetPayload(), m)
}

// NewMessageID returns 32 random hex digits.
func NewMessageID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
