package sqlitequeue

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/msgcontract/msgcontract/runtime-go/dlq"
)

var _ dlq.Store = (*Transport)(nil)

func insertDeadLetter(ctx context.Context, tx *sql.Tx, r *dlq.Record) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO mc_dead_letter (topic, grp, handler, event_type, biz_key, message_id,
		envelope, reason, code, error, attempts, first_failed_at, last_failed_at, dead_at)
		VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)`,
		r.Topic, r.Group, r.Handler, r.EventType, r.BizKey, r.MessageID, r.Envelope, string(r.Reason), r.Code,
		r.Error, r.Attempts, ms(r.FirstFailedAt), ms(r.LastFailedAt), ms(r.DeadAt))
	if err != nil {
		return fmt.Errorf("sqlitequeue: dead-letter: %w", err)
	}
	return nil
}

func ms(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

func fromMs(v int64) time.Time {
	if v == 0 {
		return time.Time{}
	}
	return time.UnixMilli(v).UTC()
}

const dlqColumns = `id, topic, grp, handler, event_type, biz_key, message_id, envelope, reason, code, error,
	attempts, first_failed_at, last_failed_at, dead_at, replay_count, last_replayed_at`

func scanRecord(sc interface{ Scan(...any) error }) (*dlq.Record, error) {
	var (
		r                      dlq.Record
		id                     int64
		reason                 string
		ff, lf, dead, replayed int64
	)
	if err := sc.Scan(&id, &r.Topic, &r.Group, &r.Handler, &r.EventType, &r.BizKey, &r.MessageID, &r.Envelope,
		&reason, &r.Code, &r.Error, &r.Attempts, &ff, &lf, &dead, &r.ReplayCount, &replayed); err != nil {
		return nil, err
	}
	r.ID = strconv.FormatInt(id, 10)
	r.Reason = dlq.Reason(reason)
	r.FirstFailedAt, r.LastFailedAt, r.DeadAt, r.LastReplayedAt = fromMs(ff), fromMs(lf), fromMs(dead), fromMs(replayed)
	return &r, nil
}

// where renders f as a WHERE clause.
func where(f dlq.Filter) (string, []any, error) {
	var (
		conds []string
		args  []any
	)
	add := func(cond string, v any) {
		args = append(args, v)
		conds = append(conds, strings.ReplaceAll(cond, "?", "?"+strconv.Itoa(len(args))))
	}
	for col, v := range map[string]string{"topic": f.Topic, "grp": f.Group, "handler": f.Handler,
		"event_type": f.EventType, "biz_key": f.BizKey, "reason": string(f.Reason)} {
		if v != "" {
			add(col+" = ?", v)
		}
	}
	if len(f.IDs) > 0 {
		var ph []string
		for _, s := range f.IDs {
			id, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				return "", nil, fmt.Errorf("%w: id %q is not a number", dlq.ErrNotFound, s)
			}
			args = append(args, id)
			ph = append(ph, "?"+strconv.Itoa(len(args)))
		}
		conds = append(conds, "id IN ("+strings.Join(ph, ", ")+")")
	}
	if f.OnlyReplayed {
		conds = append(conds, "replay_count > 0")
	}
	if f.ExcludeReplayed {
		conds = append(conds, "replay_count = 0")
	}
	if len(conds) == 0 {
		return "", args, nil
	}
	return " WHERE " + strings.Join(conds, " AND "), args, nil
}

// List returns matching dead-letter records, oldest first.
func (t *Transport) List(ctx context.Context, f dlq.Filter) ([]dlq.Record, error) {
	w, args, err := where(f)
	if err != nil {
		return nil, err
	}
	limit := f.Limit
	if limit <= 0 {
		limit = dlq.DefaultLimit
	}
	rows, err := t.db.QueryContext(ctx, `SELECT `+dlqColumns+` FROM mc_dead_letter`+w+
		` ORDER BY id LIMIT `+strconv.Itoa(limit), args...)
	if err != nil {
		return nil, fmt.Errorf("sqlitequeue: dlq list: %w", err)
	}
	defer rows.Close()
	var out []dlq.Record
	for rows.Next() {
		r, err := scanRecord(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlitequeue: dlq list: %w", err)
		}
		out = append(out, *r)
	}
	return out, rows.Err()
}

// Get returns one dead-letter record.
func (t *Transport) Get(ctx context.Context, id string) (*dlq.Record, error) {
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil {
		return nil, fmt.Errorf("%w: id %q is not a number", dlq.ErrNotFound, id)
	}
	r, err := scanRecord(t.db.QueryRowContext(ctx, `SELECT `+dlqColumns+` FROM mc_dead_letter WHERE id = ?1`, n))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("%w: id %s", dlq.ErrNotFound, id)
	}
	if err != nil {
		return nil, fmt.Errorf("sqlitequeue: dlq get: %w", err)
	}
	return r, nil
}

// Replay re-enqueues the record's envelope on its original topic for its
// group, with retry_count and not_before reset; last_error and
// first_failed_at stay as history, and the record is kept, marked
// replayed.
func (t *Transport) Replay(ctx context.Context, id string) error {
	r, err := t.Get(ctx, id)
	if err != nil {
		return err
	}
	_, body, err := dlq.ReplayEnvelope(r)
	if err != nil {
		return fmt.Errorf("sqlitequeue: %w", err)
	}
	tx, err := t.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlitequeue: dlq replay: %w", err)
	}
	defer tx.Rollback()
	if err := t.enqueue(ctx, tx, r.Topic, r.Group, body, 0); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE mc_dead_letter SET replay_count = replay_count + 1, last_replayed_at = ?1
		WHERE id = ?2`, t.cfg.Now().UnixMilli(), mustID(r.ID)); err != nil {
		return fmt.Errorf("sqlitequeue: dlq replay: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlitequeue: dlq replay: %w", err)
	}
	t.notify()
	return nil
}

// Purge deletes matching records.
func (t *Transport) Purge(ctx context.Context, f dlq.Filter) (int, error) {
	w, args, err := where(f)
	if err != nil {
		return 0, err
	}
	res, err := t.db.ExecContext(ctx, `DELETE FROM mc_dead_letter`+w, args...)
	if err != nil {
		return 0, fmt.Errorf("sqlitequeue: dlq purge: %w", err)
	}
	n, err := res.RowsAffected()
	return int(n), err
}

func mustID(id string) int64 {
	n, _ := strconv.ParseInt(id, 10, 64)
	return n
}
