package consumer

import (
	"context"
	"strconv"
	"time"

	"github.com/msgcontract/msgcontract/runtime-go/dedup"
	"github.com/msgcontract/msgcontract/runtime-go/transport"
)

type outcome int

const (
	pending outcome = iota
	processed
	deduped
	failed
)

// processBatch runs steps 3-5 for a whole fetch in one transaction, each
// message inside its own savepoint: a failing message rolls back to its
// savepoint (its claim and writes go, nobody else's), the rest commit
// together, and their acks go to the transport in one call. Semantics per
// message are those of process.
func (c *Consumer) processBatch(ctx context.Context, sub transport.Subscription, ds []*transport.Delivery) {
	var items []*item
	for _, d := range ds {
		if it := c.prepare(ctx, sub, d); it != nil && !c.prefiltered(ctx, sub, it) {
			items = append(items, it)
		}
	}
	switch len(items) {
	case 0:
		return
	case 1:
		it := items[0]
		c.claimAndRun(ctx, sub, it.d, it.env, it.r, it.msg, it.log)
		return
	}
	outcomes := make([]outcome, len(items))
	errs := make([]error, len(items))
	conflicts := make([]string, len(items))
	abort := func(step string, err error) {
		for i, it := range items {
			if outcomes[i] != failed {
				c.infraFailure(ctx, sub, it.d, step, err, it.log)
			}
		}
		c.failAll(ctx, sub, items, outcomes, errs)
	}

	tx, err := c.cfg.DB.BeginTx(ctx, nil)
	if err != nil {
		abort("begin transaction", err)
		return
	}
	for i, it := range items {
		sp := "mc_sp" + strconv.Itoa(i)
		if _, err := tx.ExecContext(ctx, "SAVEPOINT "+sp); err != nil {
			_ = tx.Rollback()
			abort("savepoint", err)
			return
		}
		res, err := c.dedup.Claim(ctx, tx, dedup.Claim{
			BizKey: it.env.GetBizKey(), Handler: it.r.name, MessageID: it.env.GetMessageId(),
			PayloadHash: dedup.HashPayload(it.env.GetPayload()), At: c.cfg.Now(),
		})
		if err != nil {
			_ = tx.Rollback()
			abort("claim", err)
			return
		}
		if !res.Claimed {
			outcomes[i] = deduped
			if res.Conflict {
				conflicts[i] = res.PriorMessageID
			}
		} else {
			start := time.Now()
			herr := c.runHandler(ctx, tx, it.env, it.r, it.msg, it.log)
			c.cfg.Metrics.ObserveHandler(it.r.name, it.env.GetEventType(), time.Since(start))
			if herr != nil {
				outcomes[i], errs[i] = failed, herr
				if _, err := tx.ExecContext(ctx, "ROLLBACK TO SAVEPOINT "+sp); err != nil {
					_ = tx.Rollback()
					abort("rollback to savepoint", err)
					return
				}
			} else {
				outcomes[i] = processed
			}
		}
		if _, err := tx.ExecContext(ctx, "RELEASE SAVEPOINT "+sp); err != nil {
			_ = tx.Rollback()
			abort("release savepoint", err)
			return
		}
	}
	if err := tx.Commit(); err != nil {
		abort("commit", err)
		return
	}

	var acks []*transport.Delivery
	for i, it := range items {
		et := it.env.GetEventType()
		switch outcomes[i] {
		case processed:
			c.cfg.Metrics.IncProcessed(it.r.name, et)
			c.record(ctx, it.env, it.r, it.env.GetMessageId(), it.log)
			acks = append(acks, it.d)
		case deduped:
			c.cfg.Metrics.IncDeduped(it.r.name, et)
			if conflicts[i] != "" {
				c.cfg.Metrics.IncKeyConflict(it.r.name, et)
				it.log.Warn("msgcontract: key conflict: a duplicate biz_key carries a different payload (producer bug); deduplicated",
					"prior_message_id", conflicts[i])
			}
			acks = append(acks, it.d)
		}
	}
	if len(acks) > 0 {
		if err := sub.Ack(ctx, acks...); err != nil {
			c.cfg.Logger.Error("msgcontract: ack failed; the deliveries will come back and be deduplicated",
				"count", len(acks), "err", err)
		}
	}
	c.failAll(ctx, sub, items, outcomes, errs)
}

// failAll retries or dead-letters the failed items of a batch.
func (c *Consumer) failAll(ctx context.Context, sub transport.Subscription, items []*item, outcomes []outcome, errs []error) {
	for i, it := range items {
		if outcomes[i] == failed {
			c.fail(ctx, sub, it.d, it.env, it.r, errs[i], it.log)
		}
	}
}
