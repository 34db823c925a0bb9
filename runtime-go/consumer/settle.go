package consumer

import (
	"context"

	"github.com/msgcontract/msgcontract/runtime-go/tracing"
	"github.com/msgcontract/msgcontract/runtime-go/transport"
)

// settle runs f, which settles ds with the transport (Ack, AckTx: op
// tracing.OpAck; Defer: tracing.OpNack), inside a settle span when the
// consumer traces. The span names the deliveries' topic when they share
// one. Acknowledgements buffered during a fetch (ackBuffer) are settled,
// and spanned, once, when the fetch's are sent together.
func (c *Consumer) settle(ctx context.Context, op string, ds []*transport.Delivery, f func() error) error {
	if c.cfg.Tracer == nil {
		return f()
	}
	span := c.cfg.Tracer.StartSettle(ctx, op, sharedTopic(ds), c.cfg.Group, len(ds))
	err := f()
	tracing.Finish(span, err)
	return err
}

// sharedTopic is the topic of every delivery in ds, "" when they differ.
func sharedTopic(ds []*transport.Delivery) string {
	if len(ds) == 0 {
		return ""
	}
	topic := ds[0].Topic
	for _, d := range ds[1:] {
		if d.Topic != topic {
			return ""
		}
	}
	return topic
}
