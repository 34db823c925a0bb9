package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/msgcontract/msgcontract/runtime-go/envelope"
	"github.com/msgcontract/msgcontract/runtime-go/envelopepb"
	"github.com/msgcontract/msgcontract/runtime-go/outbox"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb/sqlitedb"
	"github.com/msgcontract/msgcontract/runtime-go/transport"
)

// With -outbox the deliveries reach the transport the way a producer
// service sends them: a producer process writes them into its outbox in
// business transactions of produceBatch, at producePace per batch, and a
// relay process publishes the outbox (runtime-go's outbox.Relay). Both are
// SIGKILLed at random like the consumers and started again: the producer
// carries on from its last commit (its progress row commits with its
// outbox rows), the relay from the outbox's unsent rows (a row published
// but not yet marked sent goes out twice; the consumers' claims absorb
// it). Their database is the producer's own SQLite file, producer.db.
const (
	produceBatch = 50
	producePace  = 100 * time.Millisecond // 500 deliveries/s: production spans several kills
	relayLease   = 2 * time.Second        // how soon a new relay takes over from a killed one
)

func producerFile(cfg config) string { return filepath.Join(cfg.dir, "producer.db") }

// stageOutbox creates the producer's database: the outbox tables and the
// plan the producer works through, in delivery order.
func stageOutbox(ctx context.Context, cfg config, deliveries []*envelopepb.Envelope) (*sql.DB, error) {
	db, err := sqlitedb.Open(producerFile(cfg))
	if err != nil {
		return nil, err
	}
	if err := outbox.Migrate(ctx, db, sqldb.SQLite); err != nil {
		db.Close()
		return nil, err
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		db.Close()
		return nil, err
	}
	defer tx.Rollback()
	for _, stmt := range []string{
		`CREATE TABLE chaos_plan (seq INTEGER PRIMARY KEY, envelope BLOB NOT NULL)`,
		`CREATE TABLE chaos_progress (next INTEGER NOT NULL)`,
		`INSERT INTO chaos_progress (next) VALUES (0)`,
	} {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			db.Close()
			return nil, fmt.Errorf("stage the producer's plan: %w", err)
		}
	}
	for i, env := range deliveries {
		b, err := envelope.Marshal(env)
		if err != nil {
			db.Close()
			return nil, err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO chaos_plan (seq, envelope) VALUES (?, ?)`, i, b); err != nil {
			db.Close()
			return nil, fmt.Errorf("stage the producer's plan: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// outboxPending counts the deliveries not yet published: the plan's rows
// the producer has not written and the outbox's unsent rows.
func outboxPending(ctx context.Context, db *sql.DB, planned int) (int, error) {
	var next int
	if err := db.QueryRowContext(ctx, `SELECT next FROM chaos_progress`).Scan(&next); err != nil {
		return 0, err
	}
	unsent, err := outbox.Pending(ctx, db)
	if err != nil {
		return 0, err
	}
	return planned - next + unsent, nil
}

// runProducer writes the plan into the outbox from where the last
// producer's commit left it; it exits 0 when the plan is done.
func runProducer(cfg config) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	db, err := sqlitedb.Open(producerFile(cfg))
	if err != nil {
		return err
	}
	defer db.Close()
	for ctx.Err() == nil {
		done, err := produceOnce(ctx, db)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		if done {
			return nil
		}
		time.Sleep(producePace)
	}
	return nil
}

// produceOnce is one business transaction: the next produceBatch
// deliveries into the outbox and the progress row past them.
func produceOnce(ctx context.Context, db *sql.DB) (done bool, err error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return false, err
	}
	defer tx.Rollback()
	var next int
	if err := tx.QueryRowContext(ctx, `SELECT next FROM chaos_progress`).Scan(&next); err != nil {
		return false, err
	}
	rows, err := tx.QueryContext(ctx, `SELECT envelope FROM chaos_plan WHERE seq >= ? ORDER BY seq LIMIT ?`, next, produceBatch)
	if err != nil {
		return false, err
	}
	var envs []*envelopepb.Envelope
	for rows.Next() {
		var b []byte
		if err := rows.Scan(&b); err != nil {
			rows.Close()
			return false, err
		}
		env, err := envelope.Unmarshal(b)
		if err != nil {
			rows.Close()
			return false, err
		}
		envs = append(envs, env)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return false, err
	}
	if len(envs) == 0 {
		return true, nil
	}
	for _, env := range envs {
		if err := outbox.Write(ctx, tx, env); err != nil {
			return false, err
		}
	}
	if _, err := tx.ExecContext(ctx, `UPDATE chaos_progress SET next = ?`, next+len(envs)); err != nil {
		return false, err
	}
	return false, tx.Commit()
}

// runRelay publishes the producer's outbox to the transport until
// stopped.
func runRelay(cfg config) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	db, err := sqlitedb.Open(producerFile(cfg))
	if err != nil {
		return err
	}
	defer db.Close()
	tr, closeTr, err := openTransport(ctx, cfg, nil)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	defer closeTr()
	pub, ok := tr.(transport.Publisher)
	if !ok {
		return fmt.Errorf("-outbox: transport %s cannot publish", cfg.transport)
	}
	r, err := outbox.NewRelay(outbox.RelayConfig{DB: db, Dialect: sqldb.SQLite, Publisher: pub,
		PollInterval: 20 * time.Millisecond, Lease: relayLease,
		Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError + 1}))})
	if err != nil {
		return err
	}
	if err := r.Run(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}
