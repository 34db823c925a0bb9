// Package txcheck is the business database's side of a broker's
// transactional (half) messages, the outbox's alternative on RocketMQ: the
// producer stores a half message the broker withholds from consumers, runs
// the business transaction, and commits or rolls the message back. Record
// writes the message id in that business transaction, so the row exists
// exactly when the business change commits; when the producer's verdict
// does not reach the broker (a crash, a lost one-way request), the broker
// asks a producer of the same group again, and Check answers from the row.
//
// The rule, the same in Go, Java and Python:
//
//   - a row for the message id: Commit;
//   - no row, and the half message is younger than the unresolved window:
//     Unknown (the broker asks again later);
//   - no row, and older: Rollback.
//
// Rollback is safe only if no business transaction commits its row after
// the window: a producer commits only while less than half the window has
// passed since the half message was stored (Deadline), and rolls back
// otherwise.
package txcheck

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/msgcontract/msgcontract/runtime-go/sqldb"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb/ddl"
)

// Table is the check-back table's name.
const Table = "msg_tx_check"

// DefaultUnresolved is the default unresolved window: how long after
// storing a half message a check-back without a row still answers
// Unknown.
const DefaultUnresolved = time.Minute

// Answer is a check-back's verdict on a half message.
type Answer int

const (
	// Unknown: ask again later.
	Unknown Answer = iota
	// Commit: deliver the message.
	Commit
	// Rollback: discard the message.
	Rollback
)

func (a Answer) String() string {
	switch a {
	case Commit:
		return "COMMIT"
	case Rollback:
		return "ROLLBACK"
	}
	return "UNKNOWN"
}

// Migrate creates the check-back table in db if it does not exist, by
// the statements of contracts/sql (sqldb/ddl).
func Migrate(ctx context.Context, db *sql.DB, d sqldb.Dialect) error {
	if err := d.Validate(); err != nil {
		return err
	}
	stmts, err := ddl.Statements(d, nil, Table)
	if err == nil {
		err = sqldb.Migrate(ctx, db, d, stmts...)
	}
	if err != nil {
		return fmt.Errorf("txcheck: migrate: %w", err)
	}
	return nil
}

// Record writes messageID (the envelope's message id) and its topic in
// tx, the business transaction of the half message.
func Record(ctx context.Context, tx *sql.Tx, messageID, topic string, now time.Time) error {
	if messageID == "" {
		return errors.New("txcheck: the half message has no message id")
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO `+Table+` (message_id, topic, created_at) VALUES ($1, $2, $3)`,
		messageID, topic, now.UnixMilli())
	if err != nil {
		return fmt.Errorf("txcheck: record %s (did you run txcheck.Migrate?): %w", messageID, err)
	}
	return nil
}

// Deadline is when a producer stops committing the business transaction
// of a half message stored at stored: half the unresolved window later, in
// whole milliseconds (rounded down, as Java and Python: an odd window's
// half millisecond is dropped).
func Deadline(stored time.Time, unresolved time.Duration) time.Time {
	return stored.Add((unresolved / 2).Truncate(time.Millisecond))
}

// Check answers the broker's check-back for the half message messageID,
// stored at stored (the message's born time), at now. A database error is
// returned with Unknown: the broker asks again.
func Check(ctx context.Context, db *sql.DB, messageID string, stored, now time.Time, unresolved time.Duration) (Answer, error) {
	if messageID == "" {
		// Not an envelope of ours: nothing will ever record it.
		return Rollback, nil
	}
	var one int
	err := db.QueryRowContext(ctx, `SELECT 1 FROM `+Table+` WHERE message_id = $1`, messageID).Scan(&one)
	switch {
	case err == nil:
		return Commit, nil
	case !errors.Is(err, sql.ErrNoRows):
		return Unknown, fmt.Errorf("txcheck: look up %s: %w", messageID, err)
	case now.Sub(stored) < unresolved:
		return Unknown, nil
	}
	return Rollback, nil
}

// Retention is how long a row is kept: once the broker has the verdict
// (its check-backs stop after transactionCheckMax tries, 15 by default,
// transactionCheckInterval apart, 30 s by default), a row answers nothing.
const Retention = 24 * time.Hour

// Prune deletes the rows written more than Retention before now and
// returns how many. A producer calls it now and then.
func Prune(ctx context.Context, db *sql.DB, now time.Time) (int64, error) {
	res, err := db.ExecContext(ctx, `DELETE FROM `+Table+` WHERE created_at < $1`, now.Add(-Retention).UnixMilli())
	if err != nil {
		return 0, fmt.Errorf("txcheck: prune: %w", err)
	}
	n, _ := res.RowsAffected()
	return n, nil
}
