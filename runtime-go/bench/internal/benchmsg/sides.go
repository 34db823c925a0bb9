package benchmsg

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/msgcontract/msgcontract/runtime-go/bench/internal/benchstat"
	"github.com/msgcontract/msgcontract/runtime-go/consumer"
	"github.com/msgcontract/msgcontract/runtime-go/metrics"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb"
	"github.com/msgcontract/msgcontract/runtime-go/transport"
)

// Result is one run of one side of a broker bench: consume and publish
// wall time, the CPU time of the consume span (this process's threads,
// the broker's not), and the transactions that wrote the effects.
type Result struct {
	Consume, Publish, CPU time.Duration
	Txs                   int
}

// Side is one contender of a broker bench.
type Side struct {
	Name, Note string
	// Run runs the side once in dir, a fresh temporary directory.
	Run func(ctx context.Context, dir string) (Result, error)
	got []Result
}

// RunInterleaved runs every side once per run, one after the other, each
// in a fresh directory named after prefix, printing each run's consume
// time; then prints the median line of each side (with its average
// transaction size, CPU a message and publish rate) and returns the
// median consume time by name.
func RunInterleaved(ctx context.Context, sides []Side, runs, n int, prefix string) (map[string]time.Duration, error) {
	for i := range runs {
		for j := range sides {
			s := &sides[j]
			dir, err := os.MkdirTemp("", prefix)
			if err != nil {
				return nil, err
			}
			r, err := s.Run(ctx, dir)
			os.RemoveAll(dir)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", s.Name, err)
			}
			s.got = append(s.got, r)
			fmt.Printf("run %d: %s %v\n", i+1, s.Name, r.Consume.Round(time.Millisecond))
		}
	}
	medians := map[string]time.Duration{}
	for _, s := range sides {
		var cs, ps, cpus []time.Duration
		txs := 0
		for _, r := range s.got {
			cs, ps, cpus = append(cs, r.Consume), append(ps, r.Publish), append(cpus, r.CPU)
			txs += r.Txs
		}
		c, p := benchstat.Median(cs), benchstat.Median(ps)
		medians[s.Name] = c
		fmt.Println(benchstat.Line(s.Name, n, c, fmt.Sprintf("%s; %.0f messages a transaction on average; %s; publish %v (%.0f msg/s), not counted",
			s.Note, float64(n*len(s.got))/float64(max(txs, 1)), benchstat.PerMessage(benchstat.Median(cpus), n),
			p.Round(time.Millisecond), benchstat.Rate(n, p))))
	}
	return medians, nil
}

// CheckEffects fails unless db holds exactly n effects.
func CheckEffects(ctx context.Context, db *sql.DB, n int) error {
	var effects int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM effects`).Scan(&effects); err != nil {
		return err
	}
	if effects != n {
		return fmt.Errorf("effects = %d, want %d", effects, n)
	}
	return nil
}

// CountingSubscriber counts the runtime's non-empty fetches (its default
// mode runs one transaction per fetch) to report the transaction size a
// bare loop is compared at. Its subscriptions keep the leases and the
// forking retry of the transport's, which the consumer looks for: the
// transport's subscriptions must have both.
type CountingSubscriber struct {
	transport.Subscriber
	Fetches atomic.Int64
}

// Subscribe wraps the transport's subscription.
func (c *CountingSubscriber) Subscribe(ctx context.Context, group string, topics []string) (transport.Subscription, error) {
	sub, err := c.Subscriber.Subscribe(ctx, group, topics)
	if err != nil {
		return nil, err
	}
	ext, ok := sub.(transport.Extender)
	if _, forks := sub.(transport.ForkingRetry); !ok || !forks {
		sub.Close()
		return nil, fmt.Errorf("CountingSubscriber: %T is not a transport.Extender and a transport.ForkingRetry", sub)
	}
	return &countingSubscription{Subscription: sub, ext: ext, fetches: &c.Fetches}, nil
}

type countingSubscription struct {
	transport.Subscription
	ext     transport.Extender
	fetches *atomic.Int64
}

var (
	_ transport.Extender     = (*countingSubscription)(nil)
	_ transport.ForkingRetry = (*countingSubscription)(nil)
)

func (s *countingSubscription) Fetch(ctx context.Context, n int) ([]*transport.Delivery, error) {
	ds, err := s.Subscription.Fetch(ctx, n)
	if len(ds) > 0 {
		s.fetches.Add(1)
	}
	return ds, err
}

func (s *countingSubscription) Lease() time.Duration { return s.ext.Lease() }
func (s *countingSubscription) Extend(ctx context.Context, ds ...*transport.Delivery) error {
	return s.ext.Extend(ctx, ds...)
}
func (s *countingSubscription) RetryMayFork() {}

// BareTx is one batch's transaction of a hand-written loop: each
// message's body (an envelope) decoded and its effect inserted (with
// withDedup after its dedup row, skipped when the row exists), then one
// commit.
func BareTx[M any](ctx context.Context, db *sql.DB, msgs []M, body func(M) []byte, withDedup bool) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, m := range msgs {
		if err := BareHandle(ctx, tx, sqldb.SQLite, body(m), withDedup); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// RunRuntime is a bench's runtime side: the consumer in its default mode
// on tr (workers and fetch size as given; 0 workers keeps the default),
// group group, the bench handler writing effects into dir/business.db,
// timed from the first effect to the n-th. onStart, when set, runs as the
// timing starts and its result when it ends (a CPU profile). The result's
// Publish is the caller's to fill.
func RunRuntime(ctx context.Context, tr transport.Subscriber, dir, group string, workers, fetch, n int, onStart func() (stop func())) (Result, error) {
	db, err := OpenEffects(ctx, filepath.Join(dir, "business.db"))
	if err != nil {
		return Result{}, err
	}
	defer db.Close()
	m, err := metrics.New(prometheus.NewRegistry())
	if err != nil {
		return Result{}, err
	}
	sub := &CountingSubscriber{Subscriber: tr}
	c, err := consumer.New(consumer.Config{DB: db, Dialect: sqldb.SQLite, Subscriber: sub, Group: group, Workers: workers,
		FetchSize: fetch, Metrics: m, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return Result{}, err
	}
	err = consumer.Register(c, Handler, Spec, func() *wrapperspb.StringValue { return &wrapperspb.StringValue{} },
		func(ctx context.Context, tx *sql.Tx, _ *wrapperspb.StringValue) error {
			return InsertEffect(ctx, tx, "rt")
		})
	if err != nil {
		return Result{}, err
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- c.Run(runCtx) }()
	for Processed(m) == 0 {
		select {
		case err := <-done:
			cancel()
			return Result{}, fmt.Errorf("the consumer stopped before the first message: %v", err)
		case <-time.After(time.Millisecond):
		}
	}
	if onStart != nil {
		defer onStart()()
	}
	start, cpu := time.Now(), benchstat.CPU()
	for Processed(m) < n {
		time.Sleep(time.Millisecond)
	}
	elapsed, cpu := time.Since(start), benchstat.CPU()-cpu
	cancel()
	if err := <-done; err != nil {
		return Result{}, err
	}
	return Result{Consume: elapsed, CPU: cpu, Txs: int(sub.Fetches.Load())}, CheckEffects(ctx, db, n)
}
