package consumer

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/msgcontract/msgcontract/runtime-go/dedup"
	"github.com/msgcontract/msgcontract/runtime-go/metrics"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb"
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
	// spOpen: the last handler's savepoint is still open (it succeeded);
	// the next one's statement releases it, and the commit the last.
	spOpen bool
	// sp is SQLite's SAVEPOINT, prepared once for the transaction's
	// handlers (see savepoint).
	sp *sql.Stmt
}

// runTx runs steps 3-5 for items in one database transaction. Conflicts
// are recorded in that transaction, and when the transport's queue lives
// in the business database the acknowledgements are written there too, so
// effect, claim and ack commit together. A failed begin, claim or commit
// hands every unsettled item back to the transport.
//
// Several items (the default, see Config.PerMessageTx) are claimed with
// one statement, then each handler runs inside a savepoint of its own. A
// handler that fails rolls back to its savepoint, which undoes its writes,
// and its claim is deleted in the transaction; the others go on, and the
// transaction commits once. A handler thus runs once per delivery attempt:
// a batch-mate's failure never runs it again (the failed message's retry
// is its next attempt). One item runs without a savepoint: its failure
// rolls the transaction back.
func (c *Consumer) runTx(ctx context.Context, sub transport.Subscription, items []*item) {
	if len(items) == 0 {
		return
	}
	c.runBatch(ctx, sub, newTxRun(items), nil)
}

func newTxRun(items []*item) *txRun {
	return &txRun{
		items: items, outcomes: make([]outcome, len(items)), errs: make([]error, len(items)),
		priors: make([]*dedup.Result, len(items)),
	}
}

// itemSavepoint is the savepoint each handler of a batch runs in.
const itemSavepoint = "mc_item"

// Statements around a batch's handlers: a statement a handler. On
// PostgreSQL a succeeding handler's savepoint is released by the next
// handler's statement, in the same round trip (pgx and lib/pq send an
// Exec without arguments by the simple protocol), so that savepoints never
// nest: each nested one holds a subtransaction, and past 64 they spill.
// MySQL replaces a savepoint of the same name itself. SQLite nests them
// (a nested savepoint is a journal mark, and ROLLBACK TO and RELEASE act
// on the innermost of the name, this handler's), which spares it parsing
// a RELEASE a handler; the commit releases them all.
const (
	openSavepoint     = "SAVEPOINT " + itemSavepoint
	reopenSavepoint   = "RELEASE SAVEPOINT " + itemSavepoint + "; SAVEPOINT " + itemSavepoint
	rollbackSavepoint = "ROLLBACK TO SAVEPOINT " + itemSavepoint
	releaseSavepoint  = "RELEASE SAVEPOINT " + itemSavepoint
)

// savepoint opens the next handler's savepoint in tx. On SQLite the
// statement is prepared once a transaction: parsing it again for each
// handler cost about as much as running it.
func (c *Consumer) savepoint(ctx context.Context, tx *sql.Tx, run *txRun) error {
	switch {
	case c.cfg.Dialect == sqldb.SQLite:
		if run.sp == nil {
			sp, err := tx.PrepareContext(ctx, openSavepoint)
			if err != nil {
				return err
			}
			run.sp = sp // closed with tx
		}
		_, err := run.sp.ExecContext(ctx)
		return err
	case run.spOpen && c.cfg.Dialect == sqldb.Postgres:
		_, err := tx.ExecContext(ctx, reopenSavepoint)
		return err
	default:
		_, err := tx.ExecContext(ctx, openSavepoint)
		return err
	}
}

// runBatch runs run's items in one transaction and settles them (see
// runTx).
//
// fetched, when not nil, is the transaction the items were read in by a
// transport.TxFetcher (see handleFetchTx), with the savepoint mc_fetched
// set after the read; it is used instead of a new one, and the items
// whose handler failed are leased in it before it commits, so that they
// are held as an ordinary fetch holds them while they are retried or
// dead-lettered. Where a new transaction would be rolled back, fetched is
// rolled back to mc_fetched, the items are leased in it and it commits
// (unfold), so that from there on everything goes as without it.
func (c *Consumer) runBatch(ctx context.Context, sub transport.Subscription, run *txRun, fetched *sql.Tx) {
	tx := fetched
	if tx == nil {
		var err error
		if tx, err = c.cfg.DB.BeginTx(ctx, nil); err != nil {
			c.abort(ctx, sub, run, "begin transaction", err)
			return
		}
	}
	// undo ends tx with nothing of it kept; it reports false when the
	// items went back to the queue instead.
	undo := func() bool {
		if fetched != nil {
			return c.unfold(ctx, fetched, run.deliveries())
		}
		c.rollback(tx, run.items[0])
		return true
	}
	dbFailed := func(step string, err error) {
		undo()
		c.abort(ctx, sub, run, step, err)
	}
	now := c.cfg.Now()
	var oneClaim [1]dedup.Claim // one item (PerMessageTx, a fetch of one) allocates no slices
	var oneResult [1]dedup.Result
	claims, results := oneClaim[:], oneResult[:]
	if len(run.items) > 1 {
		claims = make([]dedup.Claim, len(run.items))
	}
	for i, it := range run.items {
		claims[i] = it.claim(now)
	}
	var err error
	if len(claims) == 1 {
		results[0], err = c.dedup.Claim(ctx, tx, claims[0])
	} else {
		results, err = c.dedup.ClaimAll(ctx, tx, claims)
	}
	if err != nil {
		dbFailed("claim", err)
		return
	}
	savepoints := len(run.items) > 1
	var unclaimed map[[2]string]bool // keys whose claim a failed handler gave back
	var failedDs []*transport.Delivery
	for i, it := range run.items {
		res := results[i]
		if k := [2]string{claims[i].BizKey, claims[i].Handler}; !res.Claimed && unclaimed[k] {
			// It lost its key to an earlier item of the batch, whose
			// handler failed: the key is free again.
			if res, err = c.dedup.Claim(ctx, tx, claims[i]); err != nil {
				dbFailed("claim", err)
				return
			}
		}
		if step, err := c.settleClaim(ctx, tx, run, i, res, now, savepoints); err != nil {
			dbFailed(step, err)
			return
		}
		if run.outcomes[i] != failed {
			continue
		}
		if !savepoints {
			if !undo() {
				run.aborted = true
				return
			}
			c.fail(ctx, sub, it.d, it.env, it.r, run.errs[i], it.log)
			return
		}
		if err := c.dedup.Unclaim(ctx, tx, claims[i]); err != nil {
			dbFailed("unclaim", err)
			return
		}
		if unclaimed == nil {
			unclaimed = map[[2]string]bool{}
		}
		unclaimed[[2]string{claims[i].BizKey, claims[i].Handler}] = true
		failedDs = append(failedDs, it.d)
	}
	if fetched != nil && len(failedDs) > 0 {
		if err := c.fetcher.LeaseTx(ctx, tx, failedDs...); err != nil {
			dbFailed("lease", err)
			return
		}
	}
	c.finish(ctx, sub, tx, run)
}

// finish acknowledges the settled items in tx when the queue shares the
// database, commits, then counts, acknowledges the rest and retries or
// dead-letters the failed.
func (c *Consumer) finish(ctx context.Context, sub transport.Subscription, tx *sql.Tx, run *txRun) {
	settled := run.settled()
	folded := c.acker != nil && len(settled) > 0
	if folded {
		err := c.settle(ctx, tracing.OpAck, settled, func() error { return c.acker.AckTx(ctx, tx, settled...) })
		if err != nil {
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

// settleClaim runs item i's handler when res claimed its key, or records
// its conflict when res lost the key to another payload. With savepoint
// the handler runs inside one, released when it succeeds and rolled back
// to (its writes undone) when it fails. An error is a database failure in
// the step it names; a handler failure is recorded in run.
func (c *Consumer) settleClaim(ctx context.Context, tx *sql.Tx, run *txRun, i int, res dedup.Result,
	now time.Time, savepoint bool) (string, error) {
	it := run.items[i]
	if !res.Claimed {
		o := Attempt{Kind: Duplicate}
		if res.Conflict {
			o.Kind = Conflict
		}
		run.outcomes[i], run.priors[i] = deduped, &res
		if Decide(o, it.r.spec.Policy, 0).RecordConflict {
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
	if savepoint {
		if err := c.savepoint(ctx, tx, run); err != nil {
			return "savepoint", err
		}
		run.spOpen = true
	}
	start := time.Now()
	herr := c.runHandler(ctx, tx, it.env, it.r, it.msg, it.log)
	it.r.metrics.ObserveHandler(time.Since(start))
	if herr != nil {
		run.outcomes[i], run.errs[i] = failed, herr
		if savepoint {
			// ROLLBACK TO keeps the savepoint: release it too.
			if _, err := tx.ExecContext(ctx, rollbackSavepoint); err != nil {
				return "rollback to savepoint", err
			}
			if _, err := tx.ExecContext(ctx, releaseSavepoint); err != nil {
				return "release savepoint", err
			}
			run.spOpen = false
		}
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
// prefilter. A handled item's end-to-end latency runs from its envelope's
// occurred_at to now, read once on the consumer's clock after the commit.
func (c *Consumer) committed(ctx context.Context, run *txRun) {
	var now time.Time
	for i, it := range run.items {
		switch run.outcomes[i] {
		case processed:
			it.r.metrics.Inc(metrics.OutcomeHandled)
			if c.cfg.Metrics != nil {
				if now.IsZero() {
					now = c.cfg.Now()
				}
				if d, ok := metrics.EndToEndLatency(it.env.GetOccurredAt(), now); ok {
					it.r.metrics.ObserveEndToEnd(d)
				}
			}
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
