package main

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"time"

	"github.com/msgcontract/msgcontract/runtime-go/bench/internal/benchmsg"
	"github.com/msgcontract/msgcontract/runtime-go/bench/internal/benchstat"
	"github.com/msgcontract/msgcontract/runtime-go/event"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb"
)

// The floor sides measure what SQLite alone takes to write the rows, with
// no Kafka, no Go per row and no cgo call per row: the rows' values are
// staged in an in-memory table first (not timed), then each transaction of
// -fetch rows is one INSERT ... SELECT from it per table. SQLite has one
// writer, so a loop that writes these rows in its business transaction
// cannot take less time per message than this, however it is built:
//
//   - sqlite-effects: the business INSERT only (what kafka-bare writes);
//   - sqlite-effects-dedup: the same plus the runtime's dedup row, as
//     kafka-bare-dedup and kafka-runtime write it (msg_dedup: key, message
//     id, payload hash, time, and the time index that cleanup reads);
//   - sqlite-effects-key: the same plus the smallest claim there can be, a
//     table holding only the (biz_key, handler) key: no conflict detection
//     (which needs the message id and hash) and no cleanup by age.
type floorKind int

const (
	floorEffects floorKind = iota
	floorDedup
	floorKey
)

func runFloor(kind floorKind) func(ctx context.Context, cfg config, dir string) (result, error) {
	return func(ctx context.Context, cfg config, dir string) (result, error) {
		db, err := benchmsg.OpenEffects(ctx, filepath.Join(dir, "floor.db"))
		if err != nil {
			return result{}, err
		}
		defer db.Close()
		// One connection: the staged rows live in its TEMP schema.
		db.SetMaxOpenConns(1)
		if err := stageRows(ctx, db, cfg.n); err != nil {
			return result{}, err
		}
		var stmts []string
		switch kind {
		case floorDedup:
			if err := benchmsg.CreateDedup(ctx, db, sqldb.SQLite); err != nil {
				return result{}, err
			}
			stmts = append(stmts, `INSERT INTO msg_dedup (biz_key, handler, message_id, payload_hash, created_at)
				SELECT biz_key, '`+benchmsg.Handler+`', message_id, payload_hash, created_at FROM staged
				WHERE id BETWEEN $1 AND $2 ON CONFLICT (biz_key, handler) DO NOTHING`)
		case floorKey:
			if _, err := db.ExecContext(ctx, `CREATE TABLE key_claims (biz_key TEXT NOT NULL, handler TEXT NOT NULL,
				PRIMARY KEY (biz_key, handler)) WITHOUT ROWID`); err != nil {
				return result{}, err
			}
			stmts = append(stmts, `INSERT INTO key_claims (biz_key, handler)
				SELECT biz_key, '`+benchmsg.Handler+`' FROM staged WHERE id BETWEEN $1 AND $2 ON CONFLICT DO NOTHING`)
		}
		stmts = append(stmts, `INSERT INTO effects (biz_key, note) SELECT biz_key, 'bare' FROM staged WHERE id BETWEEN $1 AND $2`)
		start, cpu := time.Now(), benchstat.CPU()
		for lo := 0; lo < cfg.n; lo += cfg.fetch {
			hi := min(lo+cfg.fetch, cfg.n) - 1
			if err := floorTx(ctx, db, stmts, lo, hi); err != nil {
				return result{}, err
			}
		}
		elapsed, cpu := time.Since(start), benchstat.CPU()-cpu
		return result{consume: elapsed, cpu: cpu}, checkEffects(ctx, db, cfg.n)
	}
}

// stageRows fills the in-memory table staged with n rows of the values
// the Kafka sides write: the bench's keys, message ids made as producers
// make them, the payload's hash in hex, and the time in milliseconds.
func stageRows(ctx context.Context, db *sql.DB, n int) error {
	if _, err := db.ExecContext(ctx, `CREATE TEMP TABLE staged (id INTEGER PRIMARY KEY, biz_key TEXT NOT NULL,
		message_id TEXT NOT NULL, payload_hash TEXT NOT NULL, created_at BIGINT NOT NULL)`); err != nil {
		return fmt.Errorf("floor: stage: %w", err)
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	h := sha256.Sum256([]byte("ok"))
	hash, now := hex.EncodeToString(h[:]), time.Now().UnixMilli()
	for i := range n {
		if _, err := tx.ExecContext(ctx, `INSERT INTO staged VALUES ($1, $2, $3, $4, $5)`,
			i, key(i), event.NewMessageID(), hash, now); err != nil {
			return fmt.Errorf("floor: stage: %w", err)
		}
	}
	return tx.Commit()
}

func floorTx(ctx context.Context, db *sql.DB, stmts []string, lo, hi int) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, s := range stmts {
		if _, err := tx.ExecContext(ctx, s, lo, hi); err != nil {
			return fmt.Errorf("floor: %w", err)
		}
	}
	return tx.Commit()
}
