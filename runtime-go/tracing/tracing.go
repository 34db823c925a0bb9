// Package tracing carries W3C trace context through the envelope and
// starts the OpenTelemetry spans of docs/DESIGN.md ("Observability"),
// named and attributed after the OpenTelemetry messaging semantic
// conventions: a producer span "send <topic>" whose context is injected
// into the envelope's trace field (traceparent, tracestate), a consumer
// span "process <topic>" that continues the envelope's trace and links to
// it, and settle spans "ack <topic>" / "nack <topic>" where the consumer
// settles deliveries with the transport, with the messaging attributes
// plus msgcontract.*. testdata/otel/messaging-spans.tsv lists every span
// and attribute; Go, Java and Python test their spans against it.
//
// Tracing is optional: a nil *Tracer starts nothing, and the consumer and
// the relay skip every tracing call when they have none. Inject is a
// package function that does nothing without a span in the context.
package tracing

import (
	"context"
	"strconv"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/msgcontract/msgcontract/runtime-go/envelopepb"
)

// ScopeName is the instrumentation scope of msgcontract's spans.
const ScopeName = "github.com/msgcontract/msgcontract/runtime-go"

// Attribute keys: OpenTelemetry messaging semantic conventions, then
// msgcontract's own.
const (
	KeySystem        = attribute.Key("messaging.system")
	KeyDestination   = attribute.Key("messaging.destination.name")
	KeyMessageID     = attribute.Key("messaging.message.id")
	KeyOperationType = attribute.Key("messaging.operation.type")
	KeyOperationName = attribute.Key("messaging.operation.name")
	KeyConsumerGroup = attribute.Key("messaging.consumer.group.name")
	KeyPartition     = attribute.Key("messaging.destination.partition.id")
	KeyKafkaOffset   = attribute.Key("messaging.kafka.offset")
	KeyBatchCount    = attribute.Key("messaging.batch.message_count")
	KeyServerAddress = attribute.Key("server.address")
	KeyServerPort    = attribute.Key("server.port")
	KeyErrorType     = attribute.Key("error.type")
	KeyBizKey        = attribute.Key("msgcontract.biz_key")
	KeyEventType     = attribute.Key("msgcontract.event_type")
	KeyRetryCount    = attribute.Key("msgcontract.retry_count")
	KeyOutcome       = attribute.Key("msgcontract.outcome")
	KeyRetryDelay    = attribute.Key("msgcontract.retry_delay_seconds")
	KeyDeadLetter    = attribute.Key("msgcontract.dead_letter_reason")
)

var propagator = propagation.TraceContext{}

// carrier adapts the envelope's TraceContext to a TextMapCarrier.
type carrier struct{ tc *envelopepb.TraceContext }

func (c carrier) Get(key string) string {
	switch strings.ToLower(key) {
	case "traceparent":
		return c.tc.GetTraceparent()
	case "tracestate":
		return c.tc.GetTracestate()
	}
	return ""
}

func (c carrier) Set(key, value string) {
	switch strings.ToLower(key) {
	case "traceparent":
		c.tc.Traceparent = value
	case "tracestate":
		c.tc.Tracestate = value
	}
}

func (c carrier) Keys() []string { return []string{"traceparent", "tracestate"} }

// Inject writes the span context of ctx into env's trace field. Without a
// valid span context in ctx it leaves env as it is.
func Inject(ctx context.Context, env *envelopepb.Envelope) {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return
	}
	tc := &envelopepb.TraceContext{}
	propagator.Inject(ctx, carrier{tc})
	env.Trace = tc
}

// Extract returns ctx with env's trace context as its remote parent; ctx
// unchanged when env carries none.
func Extract(ctx context.Context, env *envelopepb.Envelope) context.Context {
	if env.GetTrace().GetTraceparent() == "" {
		return ctx
	}
	return propagator.Extract(ctx, carrier{env.GetTrace()})
}

// Operation names (messaging.operation.name) and span name prefixes.
const (
	OpSend    = "send"
	OpProcess = "process"
	OpAck     = "ack"
	OpNack    = "nack"
)

// Operation types (messaging.operation.type).
const (
	typeSend    = "send"
	typeProcess = "process"
	typeSettle  = "settle"
)

// SystemKafka is messaging.system for Apache Kafka: its process spans
// carry the delivery's partition and offset.
const SystemKafka = "kafka"

// ErrorOther is error.type for a failure without a contract error code
// (a database or transport failure, an error the handler returned
// without a code): the conventions' fallback value.
const ErrorOther = "_OTHER"

// ErrorType is error.type for a failure with code: the code in decimal
// (a contract code, or the runtime's negative codes for a panic, a
// timeout, an undecodable envelope, a missing handler), ErrorOther for 0.
func ErrorType(code int32) attribute.KeyValue {
	if code == 0 {
		return KeyErrorType.String(ErrorOther)
	}
	return KeyErrorType.String(strconv.FormatInt(int64(code), 10))
}

// Tracer starts msgcontract's spans on a TracerProvider.
type Tracer struct {
	t      trace.Tracer
	system string
	server []attribute.KeyValue
}

// Option configures a Tracer.
type Option func(*Tracer)

// WithServer sets server.address and server.port on every span: the
// broker the transport talks to (its first bootstrap server for Kafka).
// An empty address sets neither; a port of 0 sets the address only.
func WithServer(address string, port int) Option {
	return func(t *Tracer) {
		if address == "" {
			return
		}
		t.server = append(t.server[:0], KeyServerAddress.String(address))
		if port > 0 {
			t.server = append(t.server, KeyServerPort.Int(port))
		}
	}
}

// New returns a Tracer on tp. system is messaging.system: the transport's
// name ("kafka", "nats", "rabbitmq", or "msgcontract_sqlite" for the
// embedded queue, which the conventions do not name).
func New(tp trace.TracerProvider, system string, opts ...Option) *Tracer {
	t := &Tracer{t: tp.Tracer(ScopeName), system: system}
	for _, o := range opts {
		o(t)
	}
	return t
}

// System is the Tracer's messaging.system.
func (t *Tracer) System() string { return t.system }

// base is the attributes of every span: the operation, the system, the
// destination when there is one, the broker when known.
func (t *Tracer) base(opName, opType, topic string) []attribute.KeyValue {
	attrs := make([]attribute.KeyValue, 0, 16)
	attrs = append(attrs, KeySystem.String(t.system), KeyOperationName.String(opName), KeyOperationType.String(opType))
	if topic != "" {
		attrs = append(attrs, KeyDestination.String(topic))
	}
	return append(attrs, t.server...)
}

// spanName is the conventions' "{messaging.operation.name} {destination}",
// the operation alone without a destination.
func spanName(opName, topic string) string {
	if topic == "" {
		return opName
	}
	return opName + " " + topic
}

func (t *Tracer) common(opName, opType, topic string, env *envelopepb.Envelope) []attribute.KeyValue {
	return append(t.base(opName, opType, topic), KeyMessageID.String(env.GetMessageId()),
		KeyBizKey.String(env.GetBizKey()), KeyEventType.String(env.GetEventType()),
		KeyRetryCount.Int64(int64(env.GetRetryCount())))
}

// KafkaLocation is the attributes of a Kafka record's place: its
// partition (a string, as the conventions have it) and offset.
func KafkaLocation(partition int32, offset int64) []attribute.KeyValue {
	return []attribute.KeyValue{KeyPartition.String(strconv.FormatInt(int64(partition), 10)), KeyKafkaOffset.Int64(offset)}
}

// StartPublish starts the producer span "send <topic>" and injects it
// into env, so consumers continue its trace. Its parent is ctx's span, or
// else the trace env already carries (the outbox relay publishing what a
// producer wrote). The caller ends the span with Finish.
func (t *Tracer) StartPublish(ctx context.Context, topic string, env *envelopepb.Envelope) (context.Context, trace.Span) {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		ctx = Extract(ctx, env)
	}
	attrs := t.common(OpSend, typeSend, topic, env)
	ctx, span := t.t.Start(ctx, spanName(OpSend, topic), trace.WithSpanKind(trace.SpanKindProducer), trace.WithAttributes(attrs...))
	Inject(ctx, env)
	return ctx, span
}

// StartProcess starts the consumer span "process <topic>" for env: a child
// of the envelope's trace context, which every retry carries unchanged, and
// linked to it, as the messaging conventions ask. extra is more attributes
// known when the delivery arrives (KafkaLocation). End it with End.
func (t *Tracer) StartProcess(ctx context.Context, topic, group string, env *envelopepb.Envelope,
	extra ...attribute.KeyValue) (context.Context, trace.Span) {
	parent := Extract(ctx, env)
	attrs := t.common(OpProcess, typeProcess, topic, env)
	if group != "" {
		attrs = append(attrs, KeyConsumerGroup.String(group))
	}
	attrs = append(attrs, extra...)
	opts := []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindConsumer), trace.WithAttributes(attrs...)}
	if sc := trace.SpanContextFromContext(parent); sc.IsValid() && sc.IsRemote() {
		opts = append(opts, trace.WithLinks(trace.Link{SpanContext: sc}))
	}
	return t.t.Start(parent, spanName(OpProcess, topic), opts...)
}

// StartSettle starts a settle span "<op> <topic>" (kind CLIENT): op is
// OpAck or OpNack, topic the destination of every delivery settled (""
// when they come from several, and the name is the operation alone),
// count how many are settled (messaging.batch.message_count when not 1).
// End it with Finish.
func (t *Tracer) StartSettle(ctx context.Context, op, topic, group string, count int) trace.Span {
	attrs := t.base(op, typeSettle, topic)
	if group != "" {
		attrs = append(attrs, KeyConsumerGroup.String(group))
	}
	if count != 1 {
		attrs = append(attrs, KeyBatchCount.Int(count))
	}
	_, span := t.t.Start(ctx, spanName(op, topic), trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	return span
}

// Finish ends a send or settle span; err, when not nil, marks it failed
// with error.type _OTHER. A nil span is ignored.
func Finish(span trace.Span, err error) {
	if span == nil {
		return
	}
	if err != nil {
		span.SetAttributes(KeyErrorType.String(ErrorOther))
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}

// End records a delivery's outcome (metrics.Outcome* values, or
// "deferred" / "handed_back") on span and ends it; err, when not nil,
// marks the span failed, with error.type from attrs (ErrorType) or else
// _OTHER. A nil span is ignored.
func End(span trace.Span, outcome string, err error, attrs ...attribute.KeyValue) {
	if span == nil {
		return
	}
	attrs = append(attrs, KeyOutcome.String(outcome))
	if err != nil && !hasKey(attrs, KeyErrorType) {
		attrs = append(attrs, KeyErrorType.String(ErrorOther))
	}
	span.SetAttributes(attrs...)
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}

func hasKey(attrs []attribute.KeyValue, k attribute.Key) bool {
	for _, a := range attrs {
		if a.Key == k {
			return true
		}
	}
	return false
}
