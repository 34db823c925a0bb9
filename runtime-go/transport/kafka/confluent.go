package kafka

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/msgcontract/msgcontract/runtime-go/confluent"
	"github.com/msgcontract/msgcontract/runtime-go/dlq"
	"github.com/msgcontract/msgcontract/runtime-go/envelope"
	"github.com/msgcontract/msgcontract/runtime-go/envelopepb"
	"github.com/msgcontract/msgcontract/runtime-go/optionspb"
	"github.com/msgcontract/msgcontract/runtime-go/transport"
)

// HeaderEnvelope holds, on a record in the Confluent wire format, the
// envelope without its payload (binary protobuf): the payload is the
// record's value, framed.
const HeaderEnvelope = "msgcontract.envelope"

// ConfluentConfig switches a Transport's event topics to the Confluent
// Schema Registry wire format.
type ConfluentConfig struct {
	// RegistryURL is the base URL of a Confluent-compatible registry
	// (`msgcontract registry serve`, or Confluent's).
	RegistryURL string
	// HTTPClient defaults to a client with a 10 s timeout.
	HTTPClient *http.Client
}

// wire frames and unframes records for one Transport.
type wire struct {
	reg       *confluent.Client
	log       *slog.Logger
	noVersion sync.Once // logs the first answer that names no version
	mu        sync.Mutex
	descs     map[[2]string]protoreflect.MessageDescriptor // (topic, event type) -> payload message
}

func newWire(c *ConfluentConfig, log *slog.Logger) *wire {
	if c == nil {
		return nil
	}
	return &wire{reg: confluent.NewClient(c.RegistryURL, c.HTTPClient), log: log,
		descs: map[[2]string]protoreflect.MessageDescriptor{}}
}

// subject is the registry subject the event's schema is under: the
// envelope's schema_subject (generated producers set it), else
// Confluent's TopicNameStrategy on the user's topic, as the generated
// specs default to.
func subject(env *envelopepb.Envelope, topic string) string {
	if s := env.GetSchemaSubject(); s != "" {
		return s
	}
	return topic + "-value"
}

// frame returns the record value and envelope header of env on topic
// (the user's topic, without the namespace).
func (w *wire) frame(ctx context.Context, topic string, env *envelopepb.Envelope) ([]byte, kgo.RecordHeader, error) {
	if ct := env.GetContentType(); ct != "" && ct != envelope.ContentTypeProto {
		return nil, kgo.RecordHeader{}, fmt.Errorf("kafka: the Confluent wire format needs a binary protobuf payload, not %s", ct)
	}
	md, err := w.descriptor(topic, env.GetEventType())
	if err != nil {
		return nil, kgo.RecordHeader{}, err
	}
	id, err := w.reg.ID(ctx, subject(env, topic), env.GetSchemaVersion())
	if err != nil {
		return nil, kgo.RecordHeader{}, fmt.Errorf("kafka: %w", err)
	}
	head := proto.Clone(env).(*envelopepb.Envelope)
	head.Payload = nil
	hb, err := envelope.Marshal(head)
	if err != nil {
		return nil, kgo.RecordHeader{}, err
	}
	return confluent.Frame(id, confluent.MessageIndex(md), env.GetPayload()), kgo.RecordHeader{Key: HeaderEnvelope, Value: hb}, nil
}

// descriptor finds the payload message of topic's event type among the
// messages linked into this binary (the generated packages register them),
// by their (msgcontract.v1.event) option.
func (w *wire) descriptor(topic, eventType string) (protoreflect.MessageDescriptor, error) {
	k := [2]string{topic, eventType}
	w.mu.Lock()
	defer w.mu.Unlock()
	if md, ok := w.descs[k]; ok {
		return md, nil
	}
	var found protoreflect.MessageDescriptor
	protoregistry.GlobalTypes.RangeMessages(func(mt protoreflect.MessageType) bool {
		md := mt.Descriptor()
		opts := md.Options()
		if opts == nil || !proto.HasExtension(opts, optionspb.E_Event) {
			return true
		}
		ev, _ := proto.GetExtension(opts, optionspb.E_Event).(*optionspb.Event)
		if ev.GetTopic() == topic && ev.GetEventType() == eventType {
			found = md
			return false
		}
		return true
	})
	if found == nil {
		return nil, fmt.Errorf("kafka: no message linked into this program declares event %s on topic %s: "+
			"the Confluent wire format needs its descriptor (import the generated package)", eventType, topic)
	}
	w.descs[k] = found
	return found, nil
}

// errSchema marks a record the registry check turned down: it is
// dead-lettered with dlq.ReasonSchema.
var errSchema = errors.New("schema")

// unframe returns the envelope of a framed record: the header's envelope
// with the frame's payload, after checking that the frame's schema id
// belongs to the event's subject. An envelope that names no subject or no
// version is given the subject and the version the frame's id is
// registered as (the registry's answer to the check), so the handler and
// a dead letter know the schema the payload was written with; a version
// the producer named is kept. An error wrapping errSchema condemns the
// record; any other error is the registry's trouble, worth another try.
func (w *wire) unframe(ctx context.Context, r *kgo.Record, topic string) ([]byte, *envelopepb.Envelope, error) {
	var head []byte
	for _, h := range r.Headers {
		if h.Key == HeaderEnvelope {
			head = h.Value
		}
	}
	if w == nil {
		return nil, nil, fmt.Errorf("%w: a Confluent-framed record, and Config.Confluent is not set", errSchema)
	}
	id, _, payload, err := confluent.Unframe(r.Value)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %v", errSchema, err)
	}
	if head == nil {
		return nil, nil, fmt.Errorf("%w: no %s header: the biz_key and event type are the producer's to set", errSchema, HeaderEnvelope)
	}
	env := &envelopepb.Envelope{}
	if err := proto.Unmarshal(head, env); err != nil {
		return nil, nil, fmt.Errorf("%w: %s header: %v", errSchema, HeaderEnvelope, err)
	}
	subj := subject(env, topic)
	version, err := w.reg.CheckSubject(ctx, id, subj)
	if err != nil {
		if confluent.IsRefused(err) {
			return nil, env, fmt.Errorf("%w: %v", errSchema, err)
		}
		return nil, env, err
	}
	if env.SchemaSubject == "" {
		env.SchemaSubject = subj
	}
	if env.SchemaVersion == 0 {
		env.SchemaVersion = version
		if version == 0 {
			w.noVersion.Do(func() {
				w.log.Warn("msgcontract: the schema registry names no version for a schema id; "+
					"envelopes that name none keep schema_version 0", "subject", subj, "id", id)
			})
		}
	}
	env.Payload = payload
	if env.ContentType == "" {
		env.ContentType = envelope.ContentTypeProto
	}
	body, err := envelope.Marshal(env)
	return body, env, err
}

// registryRetry is how long a framed record waits when the registry could
// not be asked.
const registryRetry = time.Second

// unframeAll rewrites the bodies of framed deliveries to envelopes. Those
// the check condemns are dead-lettered (dlq.ReasonSchema) and those the
// registry could not answer for are deferred; neither is returned.
func (s *subscription) unframeAll(ctx context.Context, ds []*transport.Delivery) []*transport.Delivery {
	out := ds[:0]
	for _, d := range ds {
		e := entryOf(d)
		if !confluent.IsFramed(e.rec.Value) {
			out = append(out, d)
			continue
		}
		body, env, err := s.t.wire.unframe(ctx, e.rec, e.topic)
		switch {
		case err == nil:
			d.Body = body
			out = append(out, d)
		case errors.Is(err, errSchema):
			now := s.t.cfg.Now()
			rec := &dlq.Record{Topic: e.topic, Group: s.group, Envelope: e.rec.Value, Reason: dlq.ReasonSchema,
				Code: codeSchema, Error: err.Error(), FirstFailedAt: now, LastFailedAt: now, DeadAt: now}
			if env != nil {
				rec.EventType, rec.BizKey, rec.MessageID = env.GetEventType(), env.GetBizKey(), env.GetMessageId()
			}
			if derr := s.DeadLetter(ctx, d, rec); derr != nil {
				s.t.cfg.Logger.Warn("msgcontract: kafka schema dead letter failed; the record comes again",
					"group", s.group, "id", d.ID, "error", derr)
				_ = s.Defer(ctx, d, now.Add(registryRetry))
			}
		default:
			s.t.cfg.Logger.Warn("msgcontract: schema registry unavailable; the record waits", "group", s.group,
				"id", d.ID, "error", err)
			_ = s.Defer(ctx, d, s.t.cfg.Now().Add(registryRetry))
		}
	}
	return out
}

// codeSchema is the dead-letter code of a record turned down by the
// registry check, beside the consumer's negative codes (decode -3,
// no handler -4).
const codeSchema = -5
