package consumer

import (
	"log/slog"

	"go.opentelemetry.io/otel/trace"

	"github.com/msgcontract/msgcontract/runtime-go/envelopepb"
	"github.com/msgcontract/msgcontract/runtime-go/transport"
)

// msgLog is a message's logger, built on first use: most messages log
// nothing, and slog.Logger.With is not free at tens of thousands of
// messages a second.
type msgLog struct {
	base *slog.Logger
	// span is the delivery's consumer span, nil when tracing is off;
	// every outcome ends it (tracing.End).
	span    trace.Span
	d       *transport.Delivery
	env     *envelopepb.Envelope
	handler string
	l       *slog.Logger
}

// get returns the logger with the message's attributes: transport id,
// topic, and once decoded message id, biz_key, retry count, event type,
// the producing span's trace_id and span_id (from traceparent) and
// handler: the field names of docs/DESIGN.md ("Observability").
func (m *msgLog) get() *slog.Logger {
	if m.l != nil {
		return m.l
	}
	args := []any{"transport_id", m.d.ID, "topic", m.d.Topic}
	if env := m.env; env != nil {
		args = append(args, "message_id", env.GetMessageId(), "biz_key", env.GetBizKey(),
			"retry_count", env.GetRetryCount(), "event_type", env.GetEventType())
		if traceID, spanID, ok := traceIDs(env.GetTrace().GetTraceparent()); ok {
			args = append(args, "trace_id", traceID, "span_id", spanID)
		}
	}
	if m.handler != "" {
		args = append(args, "handler", m.handler)
	}
	m.l = m.base.With(args...)
	return m.l
}

// traceIDs splits a W3C traceparent (version-traceid-spanid-flags) into
// its trace and span ids; ok is false for anything else.
func traceIDs(tp string) (traceID, spanID string, ok bool) {
	if len(tp) < 55 || tp[2] != '-' || tp[35] != '-' || tp[52] != '-' {
		return "", "", false
	}
	return tp[3:35], tp[36:52], true
}
