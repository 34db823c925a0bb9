// Command runtime measures what effectively-once costs on SQLite: (a) a
// bare loop doing the business INSERT per message in its own transaction,
// (b) the full runtime on the embedded transport (decode, claim, handler,
// commit, ack). It prints both throughputs and, last,
// "ratio effective-once/bare=X" (time per message of (b) over (a)).
//
// Each side runs -runs times on fresh files; medians are reported, since
// a shared machine makes single runs noisy.
//
//	go run ./bench/runtime -n 50000
package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
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

func main() {
	n := flag.Int("n", 50000, "messages")
	workers := flag.Int("workers", 2, "consumer workers")
	fetch := flag.Int("fetch", 256, "deliveries per fetch (and per transaction in batch mode)")
	runs := flag.Int("runs", 3, "repetitions; the median of each side is reported")
	batch := flag.Bool("batch", true, "process a fetch in one transaction, one savepoint per message")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the runtime phase to this file")
	flag.Parse()
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		defer f.Close()
		profile = f
	}
	if err := run(*n, *workers, *fetch, *runs, *batch); err != nil {
		fmt.Fprintln(os.Stderr, "bench-runtime:", err)
		os.Exit(1)
	}
}

var profile *os.File

func run(n, workers, fetch, runs int, batch bool) error {
	ctx := context.Background()
	var bares, fulls []time.Duration
	for i := range runs {
		dir, err := os.MkdirTemp("", "msgcontract-bench-")
		if err != nil {
			return err
		}
		bare, err := runBare(ctx, filepath.Join(dir, "bare.db"), n)
		if err == nil {
			var full time.Duration
			full, err = runRuntime(ctx, dir, n, workers, fetch, batch)
			fulls = append(fulls, full)
		}
		os.RemoveAll(dir)
		if err != nil {
			return err
		}
		bares = append(bares, bare)
		fmt.Printf("run %d: bare %v, effective-once %v\n", i+1, bare.Round(time.Millisecond), fulls[i].Round(time.Millisecond))
	}
	bare, full := median(bares), median(fulls)
	report("bare (median)", n, bare)
	report(fmt.Sprintf("effective-once (median; workers=%d fetch=%d batch=%v)", workers, fetch, batch), n, full)
	fmt.Printf("ratio effective-once/bare=%.2f\n", full.Seconds()/bare.Seconds())
	return nil
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func report(name string, n int, d time.Duration) {
	fmt.Printf("%s: %d messages in %v = %.0f msg/s\n", name, n, d.Round(time.Millisecond), float64(n)/d.Seconds())
}

// runBare does the business INSERT per message, one transaction each.
func runBare(ctx context.Context, path string, n int) (time.Duration, error) {
	db, err := sqlitedb.Open(path)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	if err := benchmsg.CreateEffects(ctx, db); err != nil {
		return 0, err
	}
	start := time.Now()
	for i := range n {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return 0, err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO effects (biz_key, note) VALUES ($1, $2)`, key(i), "bare"); err != nil {
			return 0, err
		}
		if err := tx.Commit(); err != nil {
			return 0, err
		}
	}
	return time.Since(start), nil
}

func key(i int) string { return "order:" + strconv.Itoa(i) + ":PAID" }

func runRuntime(ctx context.Context, dir string, n, workers, fetch int, batch bool) (time.Duration, error) {
	db, err := sqlitedb.Open(filepath.Join(dir, "business.db"))
	if err != nil {
		return 0, err
	}
	defer db.Close()
	if err := benchmsg.CreateEffects(ctx, db); err != nil {
		return 0, err
	}
	tr, err := sqlitequeue.Open(ctx, filepath.Join(dir, "queue.db"), sqlitequeue.Config{})
	if err != nil {
		return 0, err
	}
	defer tr.Close()
	envs := make([]*envelopepb.Envelope, 0, 1000)
	for i := range n {
		env, err := event.NewEnvelope(benchmsg.Spec, wrapperspb.String("ok"), key(i), event.Options{})
		if err != nil {
			return 0, err
		}
		envs = append(envs, env)
		if len(envs) == cap(envs) || i == n-1 {
			if err := tr.PublishBatch(ctx, benchmsg.Topic, envs); err != nil {
				return 0, err
			}
			envs = envs[:0]
		}
	}
	m, err := metrics.New(prometheus.NewRegistry())
	if err != nil {
		return 0, err
	}
	c, err := consumer.New(consumer.Config{DB: db, Dialect: sqldb.SQLite, Subscriber: tr, Workers: workers,
		FetchSize: fetch, BatchTx: batch, Metrics: m, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return 0, err
	}
	err = consumer.Register(c, benchmsg.Handler, benchmsg.Spec, func() *wrapperspb.StringValue { return &wrapperspb.StringValue{} },
		func(ctx context.Context, tx *sql.Tx, _ *wrapperspb.StringValue) error {
			return benchmsg.InsertEffect(ctx, tx, "rt")
		})
	if err != nil {
		return 0, err
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	if profile != nil {
		_ = pprof.StartCPUProfile(profile)
		defer pprof.StopCPUProfile()
	}
	start := time.Now()
	go func() { done <- c.Run(runCtx) }()
	for benchmsg.Processed(m) < n {
		time.Sleep(time.Millisecond)
	}
	elapsed := time.Since(start)
	cancel()
	if err := <-done; err != nil {
		return 0, err
	}
	var effects int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM effects`).Scan(&effects); err != nil {
		return 0, err
	}
	if effects != n {
		return 0, fmt.Errorf("effects = %d, want %d", effects, n)
	}
	return elapsed, nil
}
