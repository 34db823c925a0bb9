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
// or a second retry count. Retry copies and replays are looked up before
// their handler runs too (a first delivery, the common case, costs
// nothing).

// chainPos is d's place in env's chain.
func chainPos(d *transport.Delivery, env *envelopepb.Envelope) dedup.ChainPos {
	return dedup.ChainPos{ReplayCount: int(env.GetReplayCount()), Attempt: int(env.GetRetryCount()), DeliveryID: d.ID}
}

// superseded reports whether it, a retry copy or a replay, was superseded
// before its handler runs. A failed look-up lets it run: advanceChain
// decides again.
func (c *Consumer) superseded(ctx context.Context, it *item) (dedup.ChainPos, bool) {
	pos := chainPos(it.d, it.env)
	if !c.chains || !pos.Continues() {
		return dedup.ChainPos{}, false
	}
	went, found, err := c.dedup.ChainRow(ctx, it.r.name, it.env.GetMessageId())
	if err != nil {
		it.log.get().Warn("msgcontract: retry chain look-up failed; running the handler", "error", err)
		return went, false
	}
	return went, found && dedup.Superseded(went, pos)
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
	ok, went, err := c.dedup.Advance(ctx, dedup.ChainStep{
		Handler: r.name, MessageID: env.GetMessageId(), Pos: chainPos(d, env), At: now,
	})
	it := &item{d: d, env: env, r: r, log: log}
	if err != nil {
		c.infraFailure(ctx, sub, it, "advance retry chain", err)
		return false
	}
	if !ok {
		c.dropSuperseded(ctx, sub, it, went)
	}
	return ok
}

// dropSuperseded acknowledges it, a copy whose chain went on without it.
func (c *Consumer) dropSuperseded(ctx context.Context, sub transport.Subscription, it *item, went dedup.ChainPos) {
	it.r.metrics.Inc(metrics.OutcomeDeduplicated)
	tracing.End(it.log.span, metrics.OutcomeDeduplicated, nil)
	it.log.get().Info("msgcontract: superseded copy acknowledged: another copy of this message went on",
		"outcome", metrics.OutcomeDeduplicated, "chain_replay_count", went.ReplayCount,
		"chain_attempt", went.Attempt, "chain_delivery_id", went.DeliveryID)
	c.ack(ctx, sub, it.d, it.log)
}
