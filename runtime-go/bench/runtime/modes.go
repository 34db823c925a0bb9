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
	"github.com/msgcontract/msgcontract/runtime-go/consumer"
	"github.com/msgcontract/msgcontract/runtime-go/envelopepb"
	"github.com/msgcontract/msgcontract/runtime-go/event"
	"github.com/msgcontract/msgcontract/runtime-go/metrics"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb/sqlitedb"
	"github.com/msgcontract/msgcontract/runtime-go/transport/sqlitequeue"
)

// runBare does the business INSERT per message, committing every txSize
// messages.
func runBare(ctx context.Context, path string, n, txSize int) (result, error) {
	db, err := openBusiness(ctx, path)
	if err != nil {
		return result{}, err
	}
	defer db.Close()
	start := time.Now()
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
	return result{consume: time.Since(start)}, nil
}

// openBusiness opens a fresh business database with its effects table.
func openBusiness(ctx context.Context, path string) (*sql.DB, error) {
	db, err := sqlitedb.Open(path)
	if err != nil {
		return nil, err
	}
	if err := benchmsg.CreateEffects(ctx, db); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

func key(i int) string { return "order:" + strconv.Itoa(i) + ":PAID" }

// runtimeMode is what a runtime run changes from consumer.Config's
// defaults; zero fields keep them.
type runtimeMode struct {
	workers, fetch int
	perMessage     bool
}

func runRuntime(ctx context.Context, path string, n int, rm runtimeMode) (result, error) {
	db, err := openBusiness(ctx, path)
	if err != nil {
		return result{}, err
	}
	defer db.Close()
	tr, err := sqlitequeue.New(ctx, sqlitequeue.Config{DB: db})
	if err != nil {
		return result{}, err
	}
	defer tr.Close()
	pubStart := time.Now()
	if err := publish(ctx, tr, n); err != nil {
		return result{}, err
	}
	published := time.Since(pubStart)

	m, err := metrics.New(prometheus.NewRegistry())
	if err != nil {
		return result{}, err
	}
	c, err := consumer.New(consumer.Config{DB: db, Dialect: sqldb.SQLite, Subscriber: tr, Workers: rm.workers,
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
	start := time.Now()
	go func() { done <- c.Run(runCtx) }()
	// Polling a counter ends the measurement within a millisecond of the
	// last message; it synchronises nothing the verdict depends on.
	for benchmsg.Processed(m) < n {
		time.Sleep(time.Millisecond)
	}
	elapsed := time.Since(start)
	cancel()
	if err := <-done; err != nil {
		return result{}, err
	}
	var effects, queued int
	if err := db.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM effects), (SELECT count(*) FROM mc_queue)`).
		Scan(&effects, &queued); err != nil {
		return result{}, err
	}
	if effects != n || queued != 0 {
		return result{}, fmt.Errorf("effects = %d, want %d; %d messages still queued", effects, n, queued)
	}
	return result{consume: elapsed, publish: published}, nil
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
