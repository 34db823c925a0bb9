package consumer

import (
	"log/slog"

	"github.com/msgcontract/msgcontract/runtime-go/envelopepb"
	"github.com/msgcontract/msgcontract/runtime-go/transport"
)

// msgLog is a message's logger, built on first use: most messages log
// nothing, and slog.Logger.With is not free at tens of thousands of
// messages a second.
type msgLog struct {
	base    *slog.Logger
	d       *transport.Delivery
	env     *envelopepb.Envelope
	handler string
	l       *slog.Logger
}

// get returns the logger with the message's attributes: transport id,
// topic, and once decoded message id, biz_key, retry count, event type,
// traceparent and handler.
func (m *msgLog) get() *slog.Logger {
	if m.l != nil {
		return m.l
	}
	args := []any{"transport_id", m.d.ID, "topic", m.d.Topic}
	if env := m.env; env != nil {
		args = append(args, "message_id", env.GetMessageId(), "biz_key", env.GetBizKey(),
			"retry_count", env.GetRetryCount(), "event_type", env.GetEventType())
		if tp := env.GetTrace().GetTraceparent(); tp != "" {
			args = append(args, "traceparent", tp)
		}
	}
	if m.handler != "" {
		args = append(args, "handler", m.handler)
	}
	m.l = m.base.With(args...)
	return m.l
}
