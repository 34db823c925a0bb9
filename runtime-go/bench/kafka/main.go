// Command kafka measures what effectively-once costs on Apache Kafka: (a)
// a bare franz-go consumer-group loop that polls up to -fetch records,
// inserts each record's key into the business table in one SQLite
// transaction, commits it and marks the offsets for franz-go's periodic
// commit; (b) the full
// runtime on the kafka transport in its default mode (decode, claim,
// handler, one transaction per fetch of the same size, savepoints only
// after a failure, settled-prefix offset commits). Both read the same -n records from a
// fresh topic of the broker at $MSGCONTRACT_KAFKA_BROKERS
// (scripts/with-kafka.sh). Each side is timed from its first effect to
// its last, so joining the group is not counted; it prints both
// throughputs and, last, "ratio kafka-runtime/kafka-bare=X" (time per
// message of (b) over (a)), medians of -runs runs.
//
//	bash scripts/with-kafka.sh bash -c 'cd runtime-go && go run ./bench/kafka -n 50000'
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
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/msgcontract/msgcontract/runtime-go/bench/internal/benchmsg"
	"github.com/msgcontract/msgcontract/runtime-go/consumer"
	"github.com/msgcontract/msgcontract/runtime-go/envelopepb"
	"github.com/msgcontract/msgcontract/runtime-go/event"
	"github.com/msgcontract/msgcontract/runtime-go/metrics"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb/sqlitedb"
	"github.com/msgcontract/msgcontract/runtime-go/transport/kafka"
)

type config struct {
	brokers                 []string
	n, workers, fetch, runs int
	partitions              int32
}

func main() {
	var cfg config
	flag.IntVar(&cfg.n, "n", 50000, "messages")
	flag.IntVar(&cfg.workers, "workers", 2, "runtime consumer workers")
	flag.IntVar(&cfg.fetch, "fetch", 256, "records per transaction, on both sides")
	flag.IntVar(&cfg.runs, "runs", 3, "repetitions; the median of each side is reported")
	p := flag.Int("partitions", 4, "partitions of the topic")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the runtime side to this file")
	flag.Parse()
	cfg.partitions = int32(*p)
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		defer f.Close()
		profile = f
	}
	brokers := os.Getenv("MSGCONTRACT_KAFKA_BROKERS")
	if brokers == "" {
		fmt.Fprintln(os.Stderr, "bench-kafka: MSGCONTRACT_KAFKA_BROKERS is not set: run it through scripts/with-kafka.sh (make bench-runtime TRANSPORT=kafka)")
		os.Exit(2)
	}
	cfg.brokers = strings.Split(brokers, ",")
	if err := run(cfg); err != nil {
		fmt.Fprintln(os.Stderr, "bench-kafka:", err)
		os.Exit(1)
	}
}

var profile *os.File

func run(cfg config) error {
	ctx := context.Background()
	var bares, fulls []time.Duration
	for i := range cfg.runs {
		dir, err := os.MkdirTemp("", "msgcontract-bench-kafka-")
		if err != nil {
			return err
		}
		bare, err := runBare(ctx, cfg, dir)
		var full time.Duration
		if err == nil {
			full, err = runRuntime(ctx, cfg, dir)
		}
		os.RemoveAll(dir)
		if err != nil {
			return err
		}
		bares, fulls = append(bares, bare), append(fulls, full)
		fmt.Printf("run %d: kafka-bare %v, kafka-runtime %v\n", i+1, bare.Round(time.Millisecond), full.Round(time.Millisecond))
	}
	bare, full := median(bares), median(fulls)
	report("kafka-bare (median; franz-go poll, one transaction per poll, offsets committed every 200 ms)", cfg.n, bare)
	report(fmt.Sprintf("kafka-runtime (median; default mode: one transaction per fetch, workers=%d fetch=%d)", cfg.workers, cfg.fetch), cfg.n, full)
	fmt.Printf("ratio kafka-runtime/kafka-bare=%.2f\n", full.Seconds()/bare.Seconds())
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

func key(i int) string { return "order:" + strconv.Itoa(i) + ":PAID" }

// fill creates a fresh namespace and publishes n envelopes to its bench
// topic.
func fill(ctx context.Context, cfg config) (*kafka.Transport, string, error) {
	ns := fmt.Sprintf("bench%d.", time.Now().UnixNano())
	tr, err := kafka.New(ctx, kafka.Config{Brokers: cfg.brokers, Namespace: ns, Partitions: cfg.partitions,
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return nil, "", err
	}
	envs := make([]*envelopepb.Envelope, 0, 1000)
	for i := range cfg.n {
		env, err := event.NewEnvelope(benchmsg.Spec, wrapperspb.String("ok"), key(i), event.Options{})
		if err != nil {
			return nil, "", err
		}
		envs = append(envs, env)
		if len(envs) == cap(envs) || i == cfg.n-1 {
			if err := tr.PublishBatch(ctx, benchmsg.Topic, envs); err != nil {
				return nil, "", err
			}
			envs = envs[:0]
		}
	}
	return tr, ns, nil
}

func openDB(ctx context.Context, path string) (*sql.DB, error) {
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

// runBare is the loop a team writes by hand on franz-go: poll, insert the
// batch in one transaction, commit it, mark the offsets, which franz-go
// commits every 200 ms (the runtime's CommitInterval).
func runBare(ctx context.Context, cfg config, dir string) (time.Duration, error) {
	tr, ns, err := fill(ctx, cfg)
	if err != nil {
		return 0, err
	}
	defer tr.Close()
	db, err := openDB(ctx, filepath.Join(dir, "bare.db"))
	if err != nil {
		return 0, err
	}
	defer db.Close()
	cl, err := kgo.NewClient(kgo.SeedBrokers(cfg.brokers...), kgo.ConsumerGroup(ns+"bare"),
		kgo.ConsumeTopics(ns+benchmsg.Topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.AutoCommitMarks(), kgo.AutoCommitInterval(200*time.Millisecond), kgo.FetchMaxWait(500*time.Millisecond))
	if err != nil {
		return 0, err
	}
	defer cl.Close()
	var start time.Time
	for done := 0; done < cfg.n; {
		fs := cl.PollRecords(ctx, cfg.fetch)
		if err := fs.Err0(); err != nil {
			return 0, err
		}
		recs := fs.Records()
		if len(recs) == 0 {
			continue
		}
		if start.IsZero() {
			start = time.Now()
		}
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return 0, err
		}
		for _, r := range recs {
			if _, err := tx.ExecContext(ctx, `INSERT INTO effects (biz_key, note) VALUES ($1, $2)`, string(r.Key), "bare"); err != nil {
				tx.Rollback()
				return 0, err
			}
		}
		if err := tx.Commit(); err != nil {
			return 0, err
		}
		cl.MarkCommitRecords(recs...) // committed every 200 ms, as the runtime does
		done += len(recs)
	}
	return time.Since(start), checkEffects(ctx, db, cfg.n)
}

func runRuntime(ctx context.Context, cfg config, dir string) (time.Duration, error) {
	tr, _, err := fill(ctx, cfg)
	if err != nil {
		return 0, err
	}
	defer tr.Close()
	db, err := openDB(ctx, filepath.Join(dir, "business.db"))
	if err != nil {
		return 0, err
	}
	defer db.Close()
	m, err := metrics.New(prometheus.NewRegistry())
	if err != nil {
		return 0, err
	}
	c, err := consumer.New(consumer.Config{DB: db, Dialect: sqldb.SQLite, Subscriber: tr, Workers: cfg.workers,
		FetchSize: cfg.fetch, Metrics: m, Logger: slog.New(slog.DiscardHandler)})
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
	go func() { done <- c.Run(runCtx) }()
	for benchmsg.Processed(m) == 0 {
		time.Sleep(time.Millisecond)
	}
	if profile != nil {
		_ = pprof.StartCPUProfile(profile)
		defer pprof.StopCPUProfile()
	}
	start := time.Now()
	for benchmsg.Processed(m) < cfg.n {
		time.Sleep(time.Millisecond)
	}
	elapsed := time.Since(start)
	cancel()
	if err := <-done; err != nil {
		return 0, err
	}
	return elapsed, checkEffects(ctx, db, cfg.n)
}

func checkEffects(ctx context.Context, db *sql.DB, n int) error {
	var effects int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM effects`).Scan(&effects); err != nil {
		return err
	}
	if effects != n {
		return fmt.Errorf("effects = %d, want %d", effects, n)
	}
	return nil
}
