package consumer

import (
	"context"
	"time"

	"github.com/msgcontract/msgcontract/runtime-go/transport"
)

// keepLeased extends the leases of ds every third of the transport's lease
// until the returned stop is called, when the subscription supports it.
func (c *Consumer) keepLeased(sub transport.Subscription, ds ...*transport.Delivery) (stop func()) {
	ext, ok := sub.(transport.Extender)
	if !ok || ext.Lease() <= 0 || len(ds) == 0 {
		return func() {}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(ext.Lease() / 3)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if err := ext.Extend(ctx, ds...); err != nil && ctx.Err() == nil {
					c.cfg.Logger.Debug("msgcontract: lease extension failed; the message may be redelivered", "error", err)
				}
			}
		}
	}()
	return func() {
		cancel()
		<-done
	}
}
