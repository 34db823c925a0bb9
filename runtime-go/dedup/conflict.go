package dedup

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/msgcontract/msgcontract/runtime-go/sqldb"
)

// Conflict is a durable record of a key conflict: a message arrived under
// a (biz_key, handler) already claimed by a message with a different
// payload. The policy is first wins: the claim's message took effect, the
// later one was acknowledged without running the handler. A conflict is a
// producer bug (two different facts under one key); the record lets an
// operator find and repair it after the fact.
type Conflict struct {
	BizKey  string `json:"biz_key"`
	Handler string `json:"handler"`
	// MessageID and PayloadHash are the losing message's.
	MessageID   string `json:"message_id"`
	PayloadHash string `json:"payload_hash"`
	// PriorMessageID and PriorPayloadHash are the claim's (the winner's).
	PriorMessageID   string `json:"prior_message_id"`
	PriorPayloadHash string `json:"prior_payload_hash"`
	// PriorClaimedAt is when the winner claimed the key; SeenAt when the
	// loser was first deduplicated against it.
	PriorClaimedAt time.Time `json:"prior_claimed_at"`
	SeenAt         time.Time `json:"seen_at"`
}

type conflictSQL struct {
	insert, list, deleteOld string
}

func newConflictSQL(d sqldb.Dialect, t string) conflictSQL {
	const cols = "biz_key, handler, message_id, payload_hash, prior_message_id, prior_payload_hash, prior_claimed_at, seen_at"
	return conflictSQL{
		// A redelivery of the same losing message records nothing new.
		insert: "INSERT INTO " + t + " (" + cols + ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8)" +
			d.OnConflictDoNothing("biz_key, handler, message_id"),
		list:      "SELECT " + cols + " FROM " + t,
		deleteOld: "DELETE FROM " + t + " WHERE seen_at < $1",
	}
}

// RecordConflict stores c in tx, the transaction that deduplicated the
// losing message, so the record commits exactly when the message is
// settled. Recording the same losing message twice keeps the first record.
func (s *Store) RecordConflict(ctx context.Context, tx *sql.Tx, c Conflict) error {
	_, err := tx.ExecContext(ctx, s.conflict.insert, c.BizKey, c.Handler, c.MessageID, c.PayloadHash,
		c.PriorMessageID, c.PriorPayloadHash, c.PriorClaimedAt.UnixMilli(), c.SeenAt.UnixMilli())
	if err != nil {
		return fmt.Errorf("dedup: record conflict: %w", err)
	}
	return nil
}

// ConflictFilter selects conflicts; zero fields match everything.
type ConflictFilter struct {
	Handler, BizKey string
	// Since keeps conflicts seen at or after it.
	Since time.Time
	// Limit caps the result; 0 means 100.
	Limit int
}

// DefaultConflictLimit is ConflictFilter.Limit's default.
const DefaultConflictLimit = 100

// Conflicts lists recorded conflicts matching f, oldest first.
func (s *Store) Conflicts(ctx context.Context, f ConflictFilter) ([]Conflict, error) {
	var where []string
	var args []any
	add := func(cond string, v any) {
		args = append(args, v)
		where = append(where, fmt.Sprintf(cond, len(args)))
	}
	if f.Handler != "" {
		add("handler = $%d", f.Handler)
	}
	if f.BizKey != "" {
		add("biz_key = $%d", f.BizKey)
	}
	if !f.Since.IsZero() {
		add("seen_at >= $%d", f.Since.UnixMilli())
	}
	limit := f.Limit
	if limit <= 0 {
		limit = DefaultConflictLimit
	}
	q := s.conflict.list
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += fmt.Sprintf(" ORDER BY seen_at, biz_key, handler, message_id LIMIT %d", limit)
	rows, err := s.cfg.DB.QueryContext(ctx, s.cfg.Dialect.Rebind(q), args...)
	if err != nil {
		return nil, fmt.Errorf("dedup: list conflicts: %w", err)
	}
	defer rows.Close()
	var out []Conflict
	for rows.Next() {
		var c Conflict
		var prior, seen int64
		if err := rows.Scan(&c.BizKey, &c.Handler, &c.MessageID, &c.PayloadHash,
			&c.PriorMessageID, &c.PriorPayloadHash, &prior, &seen); err != nil {
			return nil, fmt.Errorf("dedup: list conflicts: %w", err)
		}
		c.PriorClaimedAt, c.SeenAt = time.UnixMilli(prior), time.UnixMilli(seen)
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("dedup: list conflicts: %w", err)
	}
	return out, nil
}
