// Package tracing carries W3C trace context through the envelope and
// starts the OpenTelemetry spans of docs/DESIGN.md ("Observability"):
// a producer span "publish <topic>" whose context is injected into the
// envelope's trace field (traceparent, tracestate), and a consumer span
// "process <topic>" that continues the envelope's trace and links to it,
// with the messaging semantic-convention attributes plus msgcontract.*.
//
// Tracing is optional: a nil *Tracer starts nothing, and the consumer and
// the relay skip every tracing call when they have none. Inject is a
// package function that does nothing without a span in the context.
package tracing

import (
	"context"
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

// Tracer starts msgcontract's spans on a TracerProvider.
type Tracer struct {
	t      trace.Tracer
	system string
}

// New returns a Tracer on tp. system is messaging.system: the transport's
// name ("kafka", "nats", or "msgcontract_sqlite" for the embedded queue).
func New(tp trace.TracerProvider, system string) *Tracer {
	return &Tracer{t: tp.Tracer(ScopeName), system: system}
}

func (t *Tracer) common(topic string, env *envelopepb.Envelope) []attribute.KeyValue {
	return []attribute.KeyValue{
		KeySystem.String(t.system), KeyDestination.String(topic), KeyMessageID.String(env.GetMessageId()),
		KeyBizKey.String(env.GetBizKey()), KeyEventType.String(env.GetEventType()),
		KeyRetryCount.Int64(int64(env.GetRetryCount())),
	}
}

// StartPublish starts the producer span "publish <topic>" and injects it
// into env, so consumers continue its trace. Its parent is ctx's span, or
// else the trace env already carries (the outbox relay publishing what a
// producer wrote). The caller ends the span.
func (t *Tracer) StartPublish(ctx context.Context, topic string, env *envelopepb.Envelope) (context.Context, trace.Span) {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		ctx = Extract(ctx, env)
	}
	attrs := append(t.common(topic, env), KeyOperationType.String("send"), KeyOperationName.String("publish"))
	ctx, span := t.t.Start(ctx, "publish "+topic, trace.WithSpanKind(trace.SpanKindProducer), trace.WithAttributes(attrs...))
	Inject(ctx, env)
	return ctx, span
}

// StartProcess starts the consumer span "process <topic>" for env: a child
// of the envelope's trace context, which every retry carries unchanged, and
// linked to it, as the messaging conventions ask. End it with End.
func (t *Tracer) StartProcess(ctx context.Context, topic, group string, env *envelopepb.Envelope) (context.Context, trace.Span) {
	parent := Extract(ctx, env)
	attrs := append(t.common(topic, env), KeyOperationType.String("process"), KeyOperationName.String("process"),
		KeyConsumerGroup.String(group))
	opts := []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindConsumer), trace.WithAttributes(attrs...)}
	if sc := trace.SpanContextFromContext(parent); sc.IsValid() && sc.IsRemote() {
		opts = append(opts, trace.WithLinks(trace.Link{SpanContext: sc}))
	}
	return t.t.Start(parent, "process "+topic, opts...)
}

// End records a delivery's outcome (metrics.Outcome* values, or
// "deferred" / "handed_back") on span and ends it; err, when not nil,
// marks the span failed. A nil span is ignored.
func End(span trace.Span, outcome string, err error, attrs ...attribute.KeyValue) {
	if span == nil {
		return
	}
	span.SetAttributes(append(attrs, KeyOutcome.String(outcome))...)
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}
