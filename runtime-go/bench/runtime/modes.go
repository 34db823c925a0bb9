package main

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/msgcontract/msgcontract/runtime-go/bench/internal/benchmsg"
	"github.com/msgcontract/msgcontract/runtime-go/bench/internal/benchstat"
	"github.com/msgcontract/msgcontract/runtime-go/consumer"
	"github.com/msgcontract/msgcontract/runtime-go/envelopepb"
	"github.com/msgcontract/msgcontract/runtime-go/event"
	"github.com/msgcontract/msgcontract/runtime-go/metrics"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb/sqlitedb"
	"github.com/msgcontract/msgcontract/runtime-go/transport/sqlitequeue"
)

// group is the subscription group every mode consumes as.
const group = "default"

// queued opens a fresh business database with the queue in it, subscribes
// group to the bench topic and publishes n envelopes, timing the publish.
func queued(ctx context.Context, path string, n int) (*sql.DB, *sqlitequeue.Transport, time.Duration, error) {
	db, err := sqlitedb.Open(path)
	if err != nil {
		return nil, nil, 0, err
	}
	fail := func(err error) (*sql.DB, *sqlitequeue.Transport, time.Duration, error) {
		db.Close()
		return nil, nil, 0, err
	}
	if err := benchmsg.CreateEffects(ctx, db); err != nil {
		return fail(err)
	}
	tr, err := sqlitequeue.New(ctx, sqlitequeue.Config{DB: db})
	if err != nil {
		return fail(err)
	}
	// Subscribing first makes the published rows the group's, as they are
	// for a service whose consumer ran before.
	sub, err := tr.Subscribe(ctx, group, []string{benchmsg.Topic})
	if err != nil {
		return fail(err)
	}
	sub.Close()
	start := time.Now()
	if err := publish(ctx, tr, n); err != nil {
		return fail(err)
	}
	return db, tr, time.Since(start), nil
}

// runBare is the loop a team writes by hand over the same queue table, for
// one consumer process: in one transaction, read up to txSize of the
// group's ready rows, decode each envelope and payload, do the business
// INSERT, delete the rows (the acknowledgement), commit. The transaction's
// write lock (BEGIN IMMEDIATE) keeps other writers out, so it needs no
// lease and no dedup claim; it cannot share the queue with a second
// process, retry, or dead-letter.
//
// withDedup also writes each message's dedup row (the runtime's msg_dedup
// table, INSERT ... ON CONFLICT DO NOTHING, the effect only when the row
// is new), to show what the claim write costs apart from the runtime.
func runBare(ctx context.Context, path string, n, txSize int, withDedup bool) (result, error) {
	db, _, published, err := queued(ctx, path, n)
	if err != nil {
		return result{}, err
	}
	defer db.Close()
	if withDedup {
		if err := benchmsg.CreateDedup(ctx, db, sqldb.SQLite); err != nil {
			return result{}, err
		}
	}
	start, cpu, allocs := time.Now(), benchstat.CPU(), mallocs()
	for done := 0; done < n; {
		got, err := bareTx(ctx, db, txSize, withDedup)
		if err != nil {
			return result{}, err
		}
		if got == 0 {
			return result{}, fmt.Errorf("queue empty after %d of %d messages", done, n)
		}
		done += got
	}
	elapsed, cpu, allocs := time.Since(start), benchstat.CPU()-cpu, mallocs()-allocs
	return result{consume: elapsed, publish: published, cpu: cpu, allocs: allocs}, check(ctx, db, n)
}

// bareTx is one transaction of runBare; it returns how many messages it
// consumed.
func bareTx(ctx context.Context, db *sql.DB, txSize int, withDedup bool) (int, error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, `SELECT id, body FROM mc_queue WHERE grp = ?1 AND topic = ?2 AND not_before <= ?3
		ORDER BY id LIMIT ?4`, group, benchmsg.Topic, time.Now().UnixMilli(), txSize)
	if err != nil {
		return 0, err
	}
	type msg struct {
		id   int64
		body []byte
	}
	var ms []msg
	for rows.Next() {
		var m msg
		if err := rows.Scan(&m.id, &m.body); err != nil {
			rows.Close()
			return 0, err
		}
		ms = append(ms, m)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	for _, m := range ms {
		if err := benchmsg.BareHandle(ctx, tx, sqldb.SQLite, m.body, withDedup); err != nil {
			return 0, err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM mc_queue WHERE id = ?1`, m.id); err != nil {
			return 0, err
		}
	}
	return len(ms), tx.Commit()
}

// runInsertOnly is the ceiling: the business INSERTs alone, txSize per
// transaction, reading no queue. It is printed, never in a ratio.
func runInsertOnly(ctx context.Context, path string, n, txSize int) (result, error) {
	db, err := sqlitedb.Open(path)
	if err != nil {
		return result{}, err
	}
	defer db.Close()
	if err := benchmsg.CreateEffects(ctx, db); err != nil {
		return result{}, err
	}
	start, cpu, allocs := time.Now(), benchstat.CPU(), mallocs()
	for i := 0; i < n; i += txSize {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return result{}, err
		}
		for j := i; j < min(i+txSize, n); j++ {
			if _, err := tx.ExecContext(ctx, `INSERT INTO effects (biz_key, note) VALUES ($1, $2)`, key(j), "bare"); err != nil {
				tx.Rollback()
				return result{}, err
			}
		}
		if err := tx.Commit(); err != nil {
			return result{}, err
		}
	}
	return result{consume: time.Since(start), cpu: benchstat.CPU() - cpu, allocs: mallocs() - allocs}, nil
}

func key(i int) string { return "order:" + strconv.Itoa(i) + ":PAID" }

// runtimeMode is what a runtime run changes from consumer.Config's
// defaults; zero fields keep them.
type runtimeMode struct {
	workers, fetch int
	perMessage     bool
}

func runRuntime(ctx context.Context, path string, n int, rm runtimeMode) (result, error) {
	db, tr, published, err := queued(ctx, path, n)
	if err != nil {
		return result{}, err
	}
	defer db.Close()
	defer tr.Close()
	m, err := metrics.New(prometheus.NewRegistry())
	if err != nil {
		return result{}, err
	}
	c, err := consumer.New(consumer.Config{DB: db, Dialect: sqldb.SQLite, Subscriber: tr, Group: group, Workers: rm.workers,
		FetchSize: rm.fetch, PerMessageTx: rm.perMessage, Metrics: m, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return result{}, err
	}
	err = consumer.Register(c, benchmsg.Handler, benchmsg.Spec, func() *wrapperspb.StringValue { return &wrapperspb.StringValue{} },
		func(ctx context.Context, tx *sql.Tx, _ *wrapperspb.StringValue) error {
			return benchmsg.InsertEffect(ctx, tx, "rt")
		})
	if err != nil {
		return result{}, err
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	start, cpu, allocs := time.Now(), benchstat.CPU(), mallocs()
	go func() { done <- c.Run(runCtx) }()
	// Polling a counter ends the measurement within a millisecond of the
	// last message; it synchronises nothing the verdict depends on.
	for benchmsg.Processed(m) < n {
		time.Sleep(time.Millisecond)
	}
	elapsed, cpu, allocs := time.Since(start), benchstat.CPU()-cpu, mallocs()-allocs
	cancel()
	if err := <-done; err != nil {
		return result{}, err
	}
	return result{consume: elapsed, publish: published, cpu: cpu, allocs: allocs}, check(ctx, db, n)
}

// check is the verdict from the database: n effects, nothing left queued.
func check(ctx context.Context, db *sql.DB, n int) error {
	var effects, queued int
	if err := db.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM effects), (SELECT count(*) FROM mc_queue)`).
		Scan(&effects, &queued); err != nil {
		return err
	}
	if effects != n || queued != 0 {
		return fmt.Errorf("effects = %d, want %d; %d messages still queued", effects, n, queued)
	}
	return nil
}

func publish(ctx context.Context, tr *sqlitequeue.Transport, n int) error {
	envs := make([]*envelopepb.Envelope, 0, 1000)
	for i := range n {
		env, err := event.NewEnvelope(benchmsg.Spec, wrapperspb.String("ok"), key(i), event.Options{})
		if err != nil {
			return err
		}
		envs = append(envs, env)
		if len(envs) == cap(envs) || i == n-1 {
			if err := tr.PublishBatch(ctx, benchmsg.Topic, envs); err != nil {
				return err
			}
			envs = envs[:0]
		}
	}
	return nil
}
