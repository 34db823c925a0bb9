package dedup

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/msgcontract/msgcontract/runtime-go/sqldb"
)

// A retry chain is the sequence of copies one message goes through on its
// way to an effect or a dead letter: the delivery, then the retry copy of
// each failed attempt. On a transport that publishes the retry copy and
// then settles the delivery in a second step (Kafka, NATS JetStream), a
// crash or a rebalance between the two delivers the same copy again, it
// fails again, and a second copy of the next attempt is published: the
// chain forks, and each branch would retry and be dead-lettered on its own.
//
// The chain table keeps, per (handler, message_id), the attempt
// (retry_count) and the transport delivery id of the last copy that failed
// and went on to a retry or a dead letter. Before a copy's failure goes on,
// Advance moves the row forward; a copy is superseded, and is settled
// without going on, when another copy of the same attempt, or of a later
// one, already went on (Superseded). A redelivery of the copy that went
// on (the same delivery id) is not superseded: its retry may not have been
// published before the crash. A first delivery (attempt 0) always goes on
// and starts the chain afresh: it is an original, a producer's duplicate of
// it, or a replay of a dead letter, which the table cannot tell apart; two
// chains so started meet at their first common attempt, and the later one
// stops there.
//
// Effects never depended on this: the claim already makes a second
// branch's success a duplicate. The chain keeps the retry topics, the
// dead-letter store and the retry metrics to one branch per message.

// ChainStep is one failed copy about to go on to a retry or a dead letter.
type ChainStep struct {
	Handler, MessageID string
	// Attempt is the copy's retry_count: 0 for the first delivery.
	Attempt int
	// DeliveryID is the transport's id of the stored copy (Kafka:
	// "<topic>/<partition>/<offset>"), the same on every redelivery of it.
	DeliveryID string
	At         time.Time
}

// ChainRow is the chain table's row for one message: the copy that last
// went on.
type ChainRow struct {
	Attempt    int
	DeliveryID string
}

// Superseded reports whether a copy of attempt with deliveryID must stop
// because row's copy went on: a later attempt, or the same attempt under
// another delivery id. A first delivery (attempt 0) is never superseded.
// It is the rule in one place; Go, Java and Python decide by it alike.
func Superseded(row ChainRow, attempt int, deliveryID string) bool {
	if attempt == 0 {
		return false
	}
	return row.Attempt > attempt || (row.Attempt == attempt && row.DeliveryID != deliveryID)
}

type chainSQL struct {
	ddl                                 []string
	insert, advance, lookup, deleteOld string
}

func newChainSQL(d sqldb.Dialect, t string) chainSQL {
	return chainSQL{
		ddl: []string{
			"CREATE TABLE IF NOT EXISTS " + t + " (" +
				"handler " + d.Key(MaxNameBytes) + " NOT NULL, message_id " + d.Key(MaxNameBytes) + " NOT NULL, " +
				"attempt INTEGER NOT NULL, delivery_id TEXT NOT NULL, updated_at BIGINT NOT NULL, " +
				"PRIMARY KEY (handler, message_id))",
			d.CreateIndex(t+"_updated_at", t, "updated_at"),
		},
		insert: "INSERT INTO " + t + " (handler, message_id, attempt, delivery_id, updated_at) VALUES ($1, $2, $3, $4, $5)" +
			d.OnConflictDoNothing("handler, message_id"),
		// Superseded's complement, as a condition on the row. SQLite
		// numbers $N parameters in order of first appearance, so the
		// arguments come in that order: attempt, delivery id, time,
		// handler, message id.
		advance: "UPDATE " + t + " SET attempt = $1, delivery_id = $2, updated_at = $3 " +
			"WHERE handler = $4 AND message_id = $5 AND ($1 = 0 OR attempt < $1 OR (attempt = $1 AND delivery_id = $2))",
		lookup:    "SELECT attempt, delivery_id FROM " + t + " WHERE handler = $1 AND message_id = $2",
		deleteOld: "DELETE FROM " + t + " WHERE updated_at < $1",
	}
}

// Advance records that s's copy goes on to a retry or a dead letter, unless
// it is superseded; ok is false then, and row is the copy that went on.
// Each statement commits on its own (db, not the business transaction,
// which a failure rolled back): the row is durable before the retry is
// published, and a crash in between delivers s's copy again, which Advance
// lets go on again.
func (s *Store) Advance(ctx context.Context, st ChainStep) (ok bool, row ChainRow, err error) {
	db, q := s.cfg.DB, s.chain
	at := st.At.UnixMilli()
	res, err := db.ExecContext(ctx, q.insert, st.Handler, st.MessageID, st.Attempt, st.DeliveryID, at)
	if err == nil {
		if n, _ := res.RowsAffected(); n == 1 {
			return true, ChainRow{st.Attempt, st.DeliveryID}, nil
		}
		res, err = db.ExecContext(ctx, q.advance, st.Attempt, st.DeliveryID, at, st.Handler, st.MessageID)
	}
	if err != nil {
		return false, ChainRow{}, fmt.Errorf("dedup: advance retry chain: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 1 {
		return true, ChainRow{st.Attempt, st.DeliveryID}, nil
	}
	// No row changed: superseded, or (MySQL counts changed rows only) the
	// row already held exactly this step.
	row, found, err := s.ChainRow(ctx, st.Handler, st.MessageID)
	if err != nil {
		return false, ChainRow{}, err
	}
	if !found {
		return false, ChainRow{}, errors.New("dedup: advance retry chain: the row vanished (cleanup ran with a retention shorter than a retry chain?)")
	}
	return !Superseded(row, st.Attempt, st.DeliveryID), row, nil
}

// ChainRow reads the chain row of (handler, messageID).
func (s *Store) ChainRow(ctx context.Context, handler, messageID string) (row ChainRow, found bool, err error) {
	err = s.cfg.DB.QueryRowContext(ctx, s.chain.lookup, handler, messageID).Scan(&row.Attempt, &row.DeliveryID)
	if errors.Is(err, sql.ErrNoRows) {
		return ChainRow{}, false, nil
	}
	if err != nil {
		return ChainRow{}, false, fmt.Errorf("dedup: read retry chain: %w", err)
	}
	return row, true, nil
}
