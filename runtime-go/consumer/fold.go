package consumer

import (
	"context"
	"database/sql"
	"errors"

	"github.com/msgcontract/msgcontract/runtime-go/transport"
)

// handleFetchTx is handleFetch for a subscription whose queue lives in
// Config.DB (a transport.TxFetcher, in the default batched mode): it reads
// a fetch inside the business transaction, runs the claims and handlers,
// deletes the rows and commits, all in that one transaction, so the
// common case writes no lease and commits once. The transaction holds
// SQLite's write lock from its BEGIN IMMEDIATE (sqlitedb.Open), which
// keeps every other consumer off the rows while they are read but not
// leased; on a file opened otherwise the claims still decide, and a
// consumer whose snapshot went stale fails its write and rolls back.
//
// A handler that fails rolls back to its own savepoint (runBatch); its
// delivery is leased in the transaction, which commits the others, and
// is then retried or dead-lettered as an ordinary fetch's would be. No
// handler runs twice. Everything else first turns the fetch into an
// ordinary one (unfold: roll back to the savepoint after the read, lease
// the rows, commit) and goes on as handleFetch does: a delivery that does
// not decode, has no handler or is not yet due, the failure of a fetch's
// only handler, and a database failure. A failed begin or read waits
// InfraRetryDelay; a failed claim or commit leaves the rows unleased in
// the queue, and the worker waits InfraRetryDelay before its next fetch.
func (c *Consumer) handleFetchTx(ctx context.Context, sub transport.Subscription, tf transport.TxFetcher) {
	tx, err := c.cfg.DB.BeginTx(ctx, nil)
	if err != nil {
		c.cfg.Logger.Error("msgcontract: fetch failed", "group", c.cfg.Group, "step", "begin transaction", "error", err)
		sleep(ctx, c.cfg.InfraRetryDelay)
		return
	}
	ds, err := tf.FetchTx(ctx, tx, c.cfg.FetchSize)
	if err == nil && len(ds) > 0 {
		_, err = tx.ExecContext(ctx, "SAVEPOINT mc_fetched")
	}
	if err != nil || len(ds) == 0 {
		_ = tx.Rollback()
		if err != nil {
			c.cfg.Logger.Error("msgcontract: fetch failed", "group", c.cfg.Group, "error", err)
			sleep(ctx, c.cfg.InfraRetryDelay)
		}
		return
	}
	items := make([]*item, 0, len(ds))
	for _, d := range ds {
		it, ok := c.decode(d)
		if !ok {
			// Settling it takes transactions of its own: the ordinary path.
			if c.unfold(ctx, tx, ds) {
				c.handleFetch(ctx, sub, ds)
			}
			return
		}
		items = append(items, it)
	}
	for _, it := range items {
		c.startSpan(ctx, it.log)
	}
	run := newTxRun(items)
	c.runBatch(ctx, sub, run, tx)
	if run.aborted {
		sleep(ctx, c.cfg.InfraRetryDelay)
	}
}

// unfold rolls tx back to the savepoint after the fetch, leases ds in it
// and commits, so that ds are held as an ordinary fetch holds them. When
// that fails, tx is rolled back and ds are back in the queue: it reports
// false.
func (c *Consumer) unfold(ctx context.Context, tx *sql.Tx, ds []*transport.Delivery) bool {
	err := c.unfoldTx(ctx, tx, ds)
	if err == nil {
		return true
	}
	if rerr := tx.Rollback(); rerr != nil && !errors.Is(rerr, sql.ErrTxDone) {
		err = errors.Join(err, rerr)
	}
	c.cfg.Logger.Error("msgcontract: leasing a fetch failed; it is back in the queue", "group", c.cfg.Group,
		"count", len(ds), "error", err)
	return false
}

func (c *Consumer) unfoldTx(ctx context.Context, tx *sql.Tx, ds []*transport.Delivery) error {
	if _, err := tx.ExecContext(ctx, "ROLLBACK TO SAVEPOINT mc_fetched"); err != nil {
		return err
	}
	if err := c.fetcher.LeaseTx(ctx, tx, ds...); err != nil {
		return err
	}
	return tx.Commit()
}
