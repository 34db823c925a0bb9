package sqlitequeue

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/msgcontract/msgcontract/runtime-go/envelope"
	"github.com/msgcontract/msgcontract/runtime-go/envelopepb"
	"github.com/msgcontract/msgcontract/runtime-go/event"
)

// Publish enqueues env on topic, one row per group subscribed to topic. A
// message published before any group subscribed waits for the first one.
// The row is not delivered before env.not_before.
func (t *Transport) Publish(ctx context.Context, topic string, env *envelopepb.Envelope) error {
	return t.PublishBatch(ctx, topic, []*envelopepb.Envelope{env})
}

// PublishBatch enqueues envs on topic in one transaction, in order.
func (t *Transport) PublishBatch(ctx context.Context, topic string, envs []*envelopepb.Envelope) error {
	tx, err := t.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlitequeue: publish: %w", err)
	}
	defer tx.Rollback()
	for _, env := range envs {
		body, err := envelope.Marshal(env)
		if err != nil {
			return fmt.Errorf("sqlitequeue: publish: %w", err)
		}
		if err := t.enqueue(ctx, tx, topic, "", body, env.GetNotBefore()); err != nil {
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlitequeue: publish: %w", err)
	}
	t.notify()
	return nil
}

// PublishRaw enqueues an already encoded envelope (or any bytes: the
// consumer dead-letters what does not decode) on topic.
func (t *Transport) PublishRaw(ctx context.Context, topic string, body []byte) error {
	tx, err := t.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlitequeue: publish: %w", err)
	}
	defer tx.Rollback()
	if err := t.enqueue(ctx, tx, topic, "", body, 0); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlitequeue: publish: %w", err)
	}
	t.notify()
	return nil
}

// enqueue inserts body for group grp, or for every group subscribed to
// topic when grp is empty, under a fresh transport message id per row.
func (t *Transport) enqueue(ctx context.Context, tx *sql.Tx, topic, grp string, body []byte, notBefore int64) error {
	now := t.cfg.Now().UnixMilli()
	if grp != "" {
		_, err := tx.ExecContext(ctx, `INSERT INTO mc_queue (msg_id, topic, grp, body, not_before, created_at)
			VALUES (?1, ?2, ?3, ?4, ?5, ?6)`, event.NewMessageID(), topic, grp, body, notBefore, now)
		if err != nil {
			return fmt.Errorf("sqlitequeue: enqueue: %w", err)
		}
		return nil
	}
	rows, err := tx.QueryContext(ctx, `SELECT grp FROM mc_subscriptions WHERE topic = ?1`, topic)
	if err != nil {
		return fmt.Errorf("sqlitequeue: enqueue: %w", err)
	}
	var groups []string
	for rows.Next() {
		var g string
		if err := rows.Scan(&g); err != nil {
			rows.Close()
			return fmt.Errorf("sqlitequeue: enqueue: %w", err)
		}
		groups = append(groups, g)
	}
	rows.Close()
	if len(groups) == 0 {
		groups = []string{""} // adopted by the first group that subscribes
	}
	for _, g := range groups {
		_, err := tx.ExecContext(ctx, `INSERT INTO mc_queue (msg_id, topic, grp, body, not_before, created_at)
			VALUES (?1, ?2, ?3, ?4, ?5, ?6)`, event.NewMessageID(), topic, g, body, notBefore, now)
		if err != nil {
			return fmt.Errorf("sqlitequeue: enqueue: %w", err)
		}
	}
	return nil
}

// RemoveGroup unsubscribes group from every topic and deletes its queued
// rows, so a group that is gone for good stops accumulating messages. It
// returns how many rows it deleted.
func (t *Transport) RemoveGroup(ctx context.Context, group string) (int, error) {
	tx, err := t.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("sqlitequeue: remove group: %w", err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `DELETE FROM mc_subscriptions WHERE grp = ?1`, group); err != nil {
		return 0, fmt.Errorf("sqlitequeue: remove group: %w", err)
	}
	res, err := tx.ExecContext(ctx, `DELETE FROM mc_queue WHERE grp = ?1`, group)
	if err != nil {
		return 0, fmt.Errorf("sqlitequeue: remove group: %w", err)
	}
	n, _ := res.RowsAffected()
	return int(n), tx.Commit()
}
