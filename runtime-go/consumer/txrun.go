package consumer

import (
	"context"
	"database/sql"
	"errors"
	"strconv"
	"time"

	"github.com/msgcontract/msgcontract/runtime-go/dedup"
	"github.com/msgcontract/msgcontract/runtime-go/metrics"
	"github.com/msgcontract/msgcontract/runtime-go/tracing"
	"github.com/msgcontract/msgcontract/runtime-go/transport"
)

type outcome int

const (
	pending outcome = iota
	processed
	deduped
	failed
)

// txRun is the state of one business transaction over one or more items.
type txRun struct {
	items    []*item
	outcomes []outcome
	errs     []error
	priors   []*dedup.Result // the existing claim, for deduplicated items
	aborted  bool            // the database failed
}

// runTx runs steps 3-5 for items in one database transaction. Conflicts
// are recorded in that transaction, and when the transport's queue lives
// in the business database the acknowledgements are written there too, so
// effect, claim and ack commit together. A failed begin, claim or commit
// hands every unsettled item back to the transport.
//
// One item runs bare. Several (the default, see Config.PerMessageTx) first run optimistically: one
// claim statement for all, the handlers, one commit. When a handler fails
// that transaction is rolled back, and the others run again, each inside
// its own savepoint, so a failing message rolls back to its savepoint
// only (its claim and writes go, nobody else's). A batch's handlers may
// thus run twice; only one run's writes commit.
func (c *Consumer) runTx(ctx context.Context, sub transport.Subscription, items []*item) {
	if len(items) == 0 {
		return
	}
	run := newTxRun(items)
	if len(items) > 1 && c.runOptimistic(ctx, sub, run, nil) {
		return
	}
	c.runSavepoints(ctx, sub, run)
}

func newTxRun(items []*item) *txRun {
	return &txRun{
		items: items, outcomes: make([]outcome, len(items)), errs: make([]error, len(items)),
		priors: make([]*dedup.Result, len(items)),
	}
}

// runSavepoints runs run's items that are not yet failed in a new
// transaction, each inside a savepoint when there are several.
func (c *Consumer) runSavepoints(ctx context.Context, sub transport.Subscription, run *txRun) {
	items := run.items
	savepoints := len(items) > 1
	tx, err := c.cfg.DB.BeginTx(ctx, nil)
	if err != nil {
		c.abort(ctx, sub, run, "begin transaction", err)
		return
	}
	for i, it := range items {
		if run.outcomes[i] == failed { // in the optimistic run
			continue
		}
		sp := "mc_sp" + strconv.Itoa(i)
		if savepoints {
			if _, err := tx.ExecContext(ctx, "SAVEPOINT "+sp); err != nil {
				c.rollbackAbort(ctx, sub, tx, run, "savepoint", err)
				return
			}
		}
		if step, err := c.runOne(ctx, tx, run, i); err != nil {
			c.rollbackAbort(ctx, sub, tx, run, step, err)
			return
		}
		if run.outcomes[i] == failed {
			if !savepoints {
				c.rollback(tx, it)
				c.fail(ctx, sub, it.d, it.env, it.r, run.errs[i], it.log)
				return
			}
			if _, err := tx.ExecContext(ctx, "ROLLBACK TO SAVEPOINT "+sp); err != nil {
				c.rollbackAbort(ctx, sub, tx, run, "rollback to savepoint", err)
				return
			}
		}
		if savepoints {
			if _, err := tx.ExecContext(ctx, "RELEASE SAVEPOINT "+sp); err != nil {
				c.rollbackAbort(ctx, sub, tx, run, "release savepoint", err)
				return
			}
		}
	}
	c.finish(ctx, sub, tx, run)
}

// runOptimistic runs a batch without savepoints and settles it, returning
// true, unless a handler fails: then it undoes the transaction, keeps the
// failed item's outcome, resets the others and returns false.
//
// fetched, when not nil, is the transaction the items were read in by a
// transport.TxFetcher (see handleFetchTx), with the savepoint
// mc_fetched set after the read; it is used instead of a new one. Where a
// new one would be rolled back, fetched is rolled back to mc_fetched, the
// items are leased in it and it commits (unfold), so that from there on
// everything goes as without it.
func (c *Consumer) runOptimistic(ctx context.Context, sub transport.Subscription, run *txRun, fetched *sql.Tx) bool {
	tx := fetched
	if tx == nil {
		var err error
		if tx, err = c.cfg.DB.BeginTx(ctx, nil); err != nil {
			c.abort(ctx, sub, run, "begin transaction", err)
			return true
		}
	}
	// undo reports false when the items went back to the queue instead.
	undo := func() bool {
		if fetched != nil {
			return c.unfold(ctx, fetched, run.deliveries())
		}
		c.rollback(tx, run.items[0])
		return true
	}
	now := c.cfg.Now()
	claims := make([]dedup.Claim, len(run.items))
	for i, it := range run.items {
		claims[i] = it.claim(now)
	}
	results, err := c.dedup.ClaimAll(ctx, tx, claims)
	if err != nil {
		undo()
		c.abort(ctx, sub, run, "claim", err)
		return true
	}
	for i := range run.items {
		if step, err := c.settleClaim(ctx, tx, run, i, results[i], now); err != nil {
			undo()
			c.abort(ctx, sub, run, step, err)
			return true
		}
		if run.outcomes[i] == failed {
			if !undo() {
				run.aborted = true
				return true
			}
			for j := range run.outcomes {
				if j != i {
					run.outcomes[j], run.errs[j], run.priors[j] = pending, nil, nil
				}
			}
			return false
		}
	}
	c.finish(ctx, sub, tx, run)
	return true
}

// finish acknowledges the settled items in tx when the queue shares the
// database, commits, then counts, acknowledges the rest and retries or
// dead-letters the failed.
func (c *Consumer) finish(ctx context.Context, sub transport.Subscription, tx *sql.Tx, run *txRun) {
	settled := run.settled()
	folded := c.acker != nil && len(settled) > 0
	if folded {
		if err := c.acker.AckTx(ctx, tx, settled...); err != nil {
			c.rollbackAbort(ctx, sub, tx, run, "acknowledge in transaction", err)
			return
		}
	}
	if err := tx.Commit(); err != nil {
		c.abort(ctx, sub, run, "commit", err)
		return
	}
	c.committed(ctx, run)
	if !folded && len(settled) > 0 {
		if err := sub.Ack(ctx, settled...); err != nil {
			c.cfg.Logger.Error("msgcontract: ack failed; the deliveries will come back and be deduplicated",
				"count", len(settled), "error", err)
		}
	}
	c.failAll(ctx, sub, run)
}

func (it *item) claim(now time.Time) dedup.Claim {
	return dedup.Claim{BizKey: it.env.GetBizKey(), Handler: it.r.name, MessageID: it.env.GetMessageId(),
		PayloadHash: it.hash, At: now}
}

// runOne claims item i and runs its handler, or records its conflict. An
// error is a database failure in the step it names; a handler failure is
// recorded in run.
func (c *Consumer) runOne(ctx context.Context, tx *sql.Tx, run *txRun, i int) (string, error) {
	now := c.cfg.Now()
	res, err := c.dedup.Claim(ctx, tx, run.items[i].claim(now))
	if err != nil {
		return "claim", err
	}
	return c.settleClaim(ctx, tx, run, i, res, now)
}

// settleClaim runs item i's handler when res claimed its key, or records
// its conflict when res lost the key to another payload.
func (c *Consumer) settleClaim(ctx context.Context, tx *sql.Tx, run *txRun, i int, res dedup.Result,
	now time.Time) (string, error) {
	it := run.items[i]
	if !res.Claimed {
		run.outcomes[i], run.priors[i] = deduped, &res
		if res.Conflict {
			err := c.dedup.RecordConflict(ctx, tx, dedup.Conflict{
				BizKey: it.env.GetBizKey(), Handler: it.r.name, MessageID: it.env.GetMessageId(), PayloadHash: it.hash,
				PriorMessageID: res.PriorMessageID, PriorPayloadHash: res.PriorPayloadHash,
				PriorClaimedAt: res.PriorClaimedAt, SeenAt: now,
			})
			if err != nil {
				return "record conflict", err
			}
		}
		return "", nil
	}
	start := time.Now()
	herr := c.runHandler(ctx, tx, it.env, it.r, it.msg, it.log)
	it.r.metrics.ObserveHandler(time.Since(start))
	if herr != nil {
		run.outcomes[i], run.errs[i] = failed, herr
	} else {
		run.outcomes[i] = processed
	}
	return "", nil
}

// deliveries lists the items' deliveries.
func (r *txRun) deliveries() []*transport.Delivery {
	ds := make([]*transport.Delivery, len(r.items))
	for i, it := range r.items {
		ds[i] = it.d
	}
	return ds
}

// settled lists the deliveries to acknowledge: processed or deduplicated.
func (r *txRun) settled() []*transport.Delivery {
	var ds []*transport.Delivery
	for i, it := range r.items {
		if o := r.outcomes[i]; o == processed || o == deduped {
			ds = append(ds, it.d)
		}
	}
	return ds
}

// committed counts and logs what the commit made durable, and tells the
// prefilter.
func (c *Consumer) committed(ctx context.Context, run *txRun) {
	for i, it := range run.items {
		switch run.outcomes[i] {
		case processed:
			it.r.metrics.Inc(metrics.OutcomeHandled)
			tracing.End(it.log.span, metrics.OutcomeHandled, nil)
			c.record(ctx, it, it.env.GetMessageId(), it.hash)
		case deduped:
			if res := run.priors[i]; res.Conflict {
				it.r.metrics.Inc(metrics.OutcomeConflict)
				tracing.End(it.log.span, metrics.OutcomeConflict, nil)
				it.log.get().Warn("msgcontract: key conflict recorded: a duplicate biz_key carries a different payload "+
					"(producer bug); the first message won, this one is acknowledged",
					"outcome", metrics.OutcomeConflict, "prior_message_id", res.PriorMessageID)
			} else {
				it.r.metrics.Inc(metrics.OutcomeDeduplicated)
				tracing.End(it.log.span, metrics.OutcomeDeduplicated, nil)
				// The claim is committed (PostgreSQL waits for a
				// concurrent claimer to finish), so the prefilter may
				// learn it.
				c.record(ctx, it, res.PriorMessageID, it.hash)
				it.log.get().Debug("msgcontract: deduplicated", "outcome", metrics.OutcomeDeduplicated, "prior_message_id", res.PriorMessageID)
			}
		}
	}
}

func (c *Consumer) rollback(tx *sql.Tx, it *item) {
	if err := tx.Rollback(); err != nil && !errors.Is(err, sql.ErrTxDone) {
		it.log.get().Error("msgcontract: rollback failed", "error", err)
	}
}

func (c *Consumer) rollbackAbort(ctx context.Context, sub transport.Subscription, tx *sql.Tx, run *txRun,
	step string, err error) {
	_ = tx.Rollback()
	c.abort(ctx, sub, run, step, err)
}

// abort hands back every item not already failed (the database is at
// fault, not the message), then retries or dead-letters the failed ones.
func (c *Consumer) abort(ctx context.Context, sub transport.Subscription, run *txRun, step string, err error) {
	run.aborted = true
	for i, it := range run.items {
		if run.outcomes[i] != failed {
			c.infraFailure(ctx, sub, it, step, err)
		}
	}
	c.failAll(ctx, sub, run)
}

// failAll retries or dead-letters the failed items.
func (c *Consumer) failAll(ctx context.Context, sub transport.Subscription, run *txRun) {
	for i, it := range run.items {
		if run.outcomes[i] == failed {
			c.fail(ctx, sub, it.d, it.env, it.r, run.errs[i], it.log)
		}
	}
}
