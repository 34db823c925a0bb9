package consumer

import (
	"context"
	"time"

	"github.com/msgcontract/msgcontract/runtime-go/dedup"
	"github.com/msgcontract/msgcontract/runtime-go/envelopepb"
	"github.com/msgcontract/msgcontract/runtime-go/metrics"
	"github.com/msgcontract/msgcontract/runtime-go/tracing"
	"github.com/msgcontract/msgcontract/runtime-go/transport"
)

// One retry chain per message (dedup/chain.go), on transports whose retry
// can fork (transport.ForkingRetry). A failed copy advances the chain
// before its retry or dead letter is published; a copy that another copy
// of the same or a later attempt already advanced past is superseded: it
// is acknowledged and counted deduplicated, without a retry, a dead letter
// or a second retry count. Retry copies are looked up before their handler
// runs too (attempt 0, the common case, costs nothing).

// superseded reports whether it, a retry copy, was superseded before its
// handler runs. A failed look-up lets it run: advanceChain decides again.
func (c *Consumer) superseded(ctx context.Context, it *item) (dedup.ChainRow, bool) {
	if !c.chains || it.env.GetRetryCount() == 0 {
		return dedup.ChainRow{}, false
	}
	row, found, err := c.dedup.ChainRow(ctx, it.r.name, it.env.GetMessageId())
	if err != nil {
		it.log.get().Warn("msgcontract: retry chain look-up failed; running the handler", "error", err)
		return row, false
	}
	return row, found && dedup.Superseded(row, int(it.env.GetRetryCount()), it.d.ID)
}

// advanceChain moves env's chain forward before d's failure goes on to a
// retry or a dead letter, and reports whether it may. When another copy
// went on it settles d as superseded; when the database fails it hands d
// back.
func (c *Consumer) advanceChain(ctx context.Context, sub transport.Subscription, d *transport.Delivery,
	env *envelopepb.Envelope, r *route, now time.Time, log *msgLog) bool {
	if !c.chains {
		return true
	}
	ok, row, err := c.dedup.Advance(ctx, dedup.ChainStep{
		Handler: r.name, MessageID: env.GetMessageId(), Attempt: int(env.GetRetryCount()), DeliveryID: d.ID, At: now,
	})
	if err != nil {
		log.get().Error("msgcontract: database failure, message handed back", "step", "advance retry chain",
			"error", err, "delay", c.cfg.InfraRetryDelay)
		r.metrics.IncHandedBack()
		tracing.End(log.span, "handed_back", err)
		if derr := sub.Defer(ctx, d, now.Add(c.cfg.InfraRetryDelay)); derr != nil {
			log.get().Error("msgcontract: defer failed", "error", derr)
		}
		return false
	}
	if !ok {
		c.dropSuperseded(ctx, sub, &item{d: d, env: env, r: r, log: log}, row)
	}
	return ok
}

// dropSuperseded acknowledges it, a copy whose chain went on without it.
func (c *Consumer) dropSuperseded(ctx context.Context, sub transport.Subscription, it *item, row dedup.ChainRow) {
	it.r.metrics.Inc(metrics.OutcomeDeduplicated)
	tracing.End(it.log.span, metrics.OutcomeDeduplicated, nil)
	it.log.get().Info("msgcontract: superseded retry copy acknowledged: another copy of this message went on",
		"outcome", metrics.OutcomeDeduplicated, "retry_count", it.env.GetRetryCount(),
		"chain_attempt", row.Attempt, "chain_delivery_id", row.DeliveryID)
	c.ack(ctx, sub, it.d, it.log)
}
