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
// The chain table keeps, per (handler, message_id), the place (ChainPos)
// of the last copy that failed and went on to a retry or a dead letter.
// Before a copy's failure goes on, Advance moves the row forward; a copy
// is superseded, and is settled without going on, when another copy of the
// same place or a later one already went on (Superseded). A redelivery of
// the copy that went on (the same delivery id) is not superseded: its
// retry may not have been published before the crash. A producer's
// duplicate of the first delivery is superseded like a second retry copy,
// once the original went on; a replay of a dead letter carries a higher
// replay_count and starts a chain afresh.
//
// Effects never depended on this: the claim already makes a second
// branch's success a duplicate. The chain keeps the retry topics, the
// dead-letter store and the retry metrics to one branch per message.

// ChainPos is a copy's place in its message's chain.
type ChainPos struct {
	// ReplayCount and Attempt are the envelope's replay_count and
	// retry_count.
	ReplayCount, Attempt int
	// DeliveryID is the transport's id of the stored copy (Kafka:
	// "<topic>/<partition>/<offset>"), the same on every redelivery of it.
	DeliveryID string
}

// Continues reports whether the copy at p continues a chain that may have
// gone on without it: a retry copy or a replay. Such copies are looked up
// before their handler runs; a first delivery, the common case, is not.
func (p ChainPos) Continues() bool { return p.Attempt > 0 || p.ReplayCount > 0 }

// Superseded reports whether the copy at c must stop because the copy at
// went, the chain row's, went on: a later replay, a later attempt of the
// same replay, or the same attempt under another delivery id. It is the
// rule in one place; Go, Java and Python decide by it alike.
func Superseded(went, c ChainPos) bool {
	if went.ReplayCount != c.ReplayCount {
		return went.ReplayCount > c.ReplayCount
	}
	return went.Attempt > c.Attempt || (went.Attempt == c.Attempt && went.DeliveryID != c.DeliveryID)
}

// ChainStep is one failed copy about to go on to a retry or a dead letter.
type ChainStep struct {
	Handler, MessageID string
	Pos                ChainPos
	At                 time.Time
}

type chainSQL struct {
	insert, advance, lookup, deleteOld string
}

func newChainSQL(d sqldb.Dialect, t string) chainSQL {
	return chainSQL{
		insert: "INSERT INTO " + t + " (handler, message_id, replay_count, attempt, delivery_id, updated_at) " +
			"VALUES ($1, $2, $3, $4, $5, $6)" + d.OnConflictDoNothing("handler, message_id"),
		// Superseded's complement, as a condition on the row. SQLite
		// numbers $N parameters in order of first appearance, so the
		// arguments come in that order: replay count, attempt, delivery
		// id, time, handler, message id.
		advance: "UPDATE " + t + " SET replay_count = $1, attempt = $2, delivery_id = $3, updated_at = $4 " +
			"WHERE handler = $5 AND message_id = $6 AND (replay_count < $1 OR (replay_count = $1 AND " +
			"(attempt < $2 OR (attempt = $2 AND delivery_id = $3))))",
		lookup:    "SELECT replay_count, attempt, delivery_id FROM " + t + " WHERE handler = $1 AND message_id = $2",
		deleteOld: "DELETE FROM " + t + " WHERE updated_at < $1",
	}
}

// Advance records that st's copy goes on to a retry or a dead letter,
// unless it is superseded; ok is false then, and went is the place of the
// copy that went on. Each statement commits on its own (db, not the
// business transaction, which the failure rolled back): the row is
// durable before the retry is published, and a crash in between delivers
// st's copy again, which Advance lets go on again.
func (s *Store) Advance(ctx context.Context, st ChainStep) (ok bool, went ChainPos, err error) {
	db, q, p := s.cfg.DB, s.chain, st.Pos
	at := st.At.UnixMilli()
	res, err := db.ExecContext(ctx, q.insert, st.Handler, st.MessageID, p.ReplayCount, p.Attempt, p.DeliveryID, at)
	if err == nil {
		if n, _ := res.RowsAffected(); n == 1 {
			return true, p, nil
		}
		res, err = db.ExecContext(ctx, q.advance, p.ReplayCount, p.Attempt, p.DeliveryID, at, st.Handler, st.MessageID)
	}
	if err != nil {
		return false, ChainPos{}, fmt.Errorf("dedup: advance retry chain: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 1 {
		return true, p, nil
	}
	// No row changed: superseded, or (MySQL counts changed rows only) the
	// row already held exactly this place.
	went, found, err := s.ChainRow(ctx, st.Handler, st.MessageID)
	if err != nil {
		return false, ChainPos{}, err
	}
	if !found {
		return false, ChainPos{}, errors.New("dedup: advance retry chain: the row was deleted meanwhile; " +
			"is the claims' retention shorter than a retry chain?")
	}
	return !Superseded(went, p), went, nil
}

// ChainRow reads the place of the copy of (handler, messageID) that last
// went on.
func (s *Store) ChainRow(ctx context.Context, handler, messageID string) (went ChainPos, found bool, err error) {
	err = s.cfg.DB.QueryRowContext(ctx, s.chain.lookup, handler, messageID).Scan(&went.ReplayCount, &went.Attempt, &went.DeliveryID)
	if errors.Is(err, sql.ErrNoRows) {
		return ChainPos{}, false, nil
	}
	if err != nil {
		return ChainPos{}, false, fmt.Errorf("dedup: read retry chain: %w", err)
	}
	return went, true, nil
}
