// Command kafka measures what effectively-once costs on Apache Kafka.
// Every side reads the same -n envelopes from a fresh topic of the broker
// at $MSGCONTRACT_KAFKA_BROKERS (scripts/with-kafka.sh), published by the
// kafka transport (timed apart and printed, never counted), and writes its
// rows to a fresh business database of -db: a SQLite file (the default),
// a schema of its own on the PostgreSQL server at $MSGCONTRACT_PG_DSN
// (scripts/with-postgres.sh) or a database of its own on the MySQL or
// MariaDB server at $MSGCONTRACT_MYSQL_DSN (scripts/with-mariadb.sh):
//
//   - kafka-bare: the loop a team writes by hand on franz-go: poll up to
//     -fetch records a worker, decode each envelope and payload, the
//     business INSERT for each, in one transaction per poll and worker,
//     commit, mark the offsets for franz-go's commit every 200 ms. It runs
//     as many workers as the runtime side (one on SQLite), each with the
//     partitions p of p mod workers = its number and a transaction of its
//     own;
//   - kafka-bare-dedup: the same, also writing each record's dedup row
//     (the runtime's msg_dedup table, INSERT ... ON CONFLICT DO NOTHING,
//     the effect only when the row is new): what the claim write costs;
//   - kafka-runtime: the runtime on the kafka transport in its default
//     mode with fetches of -fetch (decode, claim, handler, one transaction
//     per fetch and worker, each handler in a savepoint of its own,
//     settled-prefix offset commits) and -workers workers
//     (consumer.Config's default for the database when 0).
//
// On SQLite, three floor sides (floor.go) time SQLite alone writing the
// same rows with no broker and no Go per row: the business row, plus the
// dedup row, plus only a key.
//
// Each side is timed from its first effect to its last, so joining the
// group is not counted. Medians of -runs runs; first comes the database
// and its durability settings as the server reports them, last
//
//	throughput kafka/DB=R                  the runtime side, msg/s
//	throughput kafka-bare/DB=R             the bare sides
//	throughput kafka-bare-dedup/DB=R
//	ratio kafka-runtime/kafka-bare=X (...)        the headline
//	ratio kafka-runtime/kafka-bare-dedup=Y (...)
//	floor ratio sqlite-effects-dedup/kafka-bare=F (...)  SQLite: no loop that
//	floor ratio sqlite-effects-key/kafka-bare=K (...)    writes the row can beat it
//
// (DB: sqlite, postgres, mariadb or mysql; a ratio is the time per message
// of the runtime over the bare loop).
//
//	bash scripts/with-kafka.sh bash -c 'cd runtime-go && go run ./bench/kafka -n 50000'
//	MSGCONTRACT_PG_DURABLE=1 bash scripts/with-kafka.sh bash scripts/with-postgres.sh \
//	  bash -c 'cd runtime-go && go run ./bench/kafka -n 50000 -db postgres'
package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/msgcontract/msgcontract/runtime-go/bench/internal/benchmsg"
	"github.com/msgcontract/msgcontract/runtime-go/bench/internal/benchstat"
	"github.com/msgcontract/msgcontract/runtime-go/consumer"
	"github.com/msgcontract/msgcontract/runtime-go/envelopepb"
	"github.com/msgcontract/msgcontract/runtime-go/event"
	"github.com/msgcontract/msgcontract/runtime-go/metrics"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb"
	"github.com/msgcontract/msgcontract/runtime-go/transport/kafka"
)

type config struct {
	brokers                 []string
	n, workers, fetch, runs int
	partitions              int32
	only                    string
	db                      string // -db: sqlite, postgres or mysql
}

// bareWorkers is the bare sides' worker count: the runtime side's.
func (c config) bareWorkers() int {
	if c.workers > 0 {
		return c.workers
	}
	d := sqldb.SQLite
	switch c.db {
	case "postgres":
		d = sqldb.Postgres
	case "mysql":
		d = sqldb.MySQL
	}
	return consumer.DefaultWorkers(d)
}

func main() {
	var cfg config
	flag.IntVar(&cfg.n, "n", 50000, "messages")
	flag.IntVar(&cfg.workers, "workers", 0, "workers of every side; 0 keeps consumer.Config's default for -db (1 on SQLite, whose one writer lock makes a second worker wait in the busy handler)")
	flag.StringVar(&cfg.db, "db", "sqlite", "business database: sqlite (a file), postgres ($MSGCONTRACT_PG_DSN, scripts/with-postgres.sh) or mysql ($MSGCONTRACT_MYSQL_DSN, scripts/with-mariadb.sh)")
	flag.IntVar(&cfg.fetch, "fetch", 256, "records per transaction, on both sides")
	flag.IntVar(&cfg.runs, "runs", 3, "repetitions; the median of each side is reported")
	p := flag.Int("partitions", 4, "partitions of the topic")
	flag.StringVar(&cfg.only, "only", "", "run only this side (kafka-bare, kafka-bare-dedup, kafka-runtime or a sqlite-effects floor; for profiling); no ratios")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the first run's consume span of the runtime side (of the -only side) to this file")
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

// result is one side's run: consume and publish wall time, and the CPU
// time of the consume span (all threads, franz-go's included).
type result struct{ consume, publish, cpu time.Duration }

func run(cfg config) error {
	ctx := context.Background()
	type side struct {
		name, note string
		run        func(ctx context.Context, cfg config, dir string) (result, error)
		got        []result
		floor      bool // no broker: nothing published
	}
	sides := []side{
		{name: "kafka-bare", note: fmt.Sprintf("franz-go poll, decode, INSERT, one transaction per poll and worker, workers=%d, offsets committed every 200 ms", cfg.bareWorkers()),
			run: func(ctx context.Context, cfg config, dir string) (result, error) {
				return runBare(ctx, cfg, dir, false)
			}},
		{name: "kafka-bare-dedup", note: "the same plus the dedup row per record",
			run: func(ctx context.Context, cfg config, dir string) (result, error) { return runBare(ctx, cfg, dir, true) }},
		{name: "kafka-runtime", note: fmt.Sprintf("default mode: one transaction per fetch and worker, workers=%s fetch=%d", workersNote(cfg.workers), cfg.fetch),
			run: runRuntime},
		{name: "sqlite-effects", note: "floor: SQLite alone writing kafka-bare's rows, one INSERT ... SELECT a transaction, no Go a row",
			run: runFloor(floorEffects), floor: true},
		{name: "sqlite-effects-dedup", note: "floor: the same plus the runtime's dedup row",
			run: runFloor(floorDedup), floor: true},
		{name: "sqlite-effects-key", note: "floor: the same plus a claim of the key alone (no conflict check, no cleanup)",
			run: runFloor(floorKey), floor: true},
	}
	if cfg.db != "sqlite" { // the floors are SQLite's
		sides = slices.DeleteFunc(sides, func(s side) bool { return s.floor })
	}
	durability, err := durability(ctx, cfg)
	if err != nil {
		return err
	}
	fmt.Println("database:", durability)
	server := benchmsg.ServerName(durability)
	if cfg.only != "" {
		i := slices.IndexFunc(sides, func(s side) bool { return s.name == cfg.only })
		if i < 0 {
			return fmt.Errorf("-only %q: no such side", cfg.only)
		}
		sides = sides[i : i+1]
	}
	for i := range cfg.runs {
		for j := range sides {
			s := &sides[j]
			dir, err := os.MkdirTemp("", "msgcontract-bench-kafka-")
			if err != nil {
				return err
			}
			r, err := s.run(ctx, cfg, dir)
			os.RemoveAll(dir)
			if err != nil {
				return fmt.Errorf("%s: %w", s.name, err)
			}
			s.got = append(s.got, r)
			fmt.Printf("run %d: %s %v\n", i+1, s.name, r.consume.Round(time.Millisecond))
		}
	}
	fmt.Printf("%d messages, %d partitions, medians of %d runs; publish timed apart\n", cfg.n, cfg.partitions, cfg.runs)
	medians := map[string]time.Duration{}
	for _, s := range sides {
		var cs, ps, cpus []time.Duration
		for _, r := range s.got {
			cs, ps, cpus = append(cs, r.consume), append(ps, r.publish), append(cpus, r.cpu)
		}
		c, p := benchstat.Median(cs), benchstat.Median(ps)
		medians[s.name] = c
		if s.floor {
			fmt.Println(benchstat.Line(s.name, cfg.n, c, fmt.Sprintf("%s; %s", s.note, benchstat.PerMessage(benchstat.Median(cpus), cfg.n))))
			continue
		}
		fmt.Println(benchstat.Line(s.name, cfg.n, c, fmt.Sprintf("%s; %s; publish %v (%.0f msg/s), not counted",
			s.note, benchstat.PerMessage(benchstat.Median(cpus), cfg.n), p.Round(time.Millisecond), benchstat.Rate(cfg.n, p))))
	}
	for _, s := range sides {
		if !s.floor {
			name, _ := strings.CutSuffix(s.name, "-runtime")
			fmt.Printf("throughput %s/%s=%.0f\n", name, server, benchstat.Rate(cfg.n, medians[s.name]))
		}
	}
	if cfg.only != "" {
		return nil
	}
	fmt.Println(benchstat.Ratio("kafka-runtime", "kafka-bare-dedup", cfg.n, medians["kafka-runtime"], medians["kafka-bare-dedup"]))
	fmt.Println(benchstat.Ratio("kafka-runtime", "kafka-bare", cfg.n, medians["kafka-runtime"], medians["kafka-bare"]))
	if cfg.db != "sqlite" {
		return nil
	}
	// What no implementation can beat: SQLite's one writer alone, writing
	// the same rows, against the whole bare loop.
	for _, f := range []string{"sqlite-effects-dedup", "sqlite-effects-key"} {
		fmt.Println("floor " + benchstat.Ratio(f, "kafka-bare", cfg.n, medians[f], medians["kafka-bare"]))
	}
	return nil
}

func workersNote(n int) string {
	if n == 0 {
		return "default"
	}
	return strconv.Itoa(n)
}

func key(i int) string { return "order:" + strconv.Itoa(i) + ":PAID" }

// fill creates a fresh namespace and publishes n envelopes to its bench
// topic, timing the publish.
func fill(ctx context.Context, cfg config) (*kafka.Transport, string, time.Duration, error) {
	ns := fmt.Sprintf("bench%d.", time.Now().UnixNano())
	tr, err := kafka.New(ctx, kafka.Config{Brokers: cfg.brokers, Namespace: ns, Partitions: cfg.partitions,
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return nil, "", 0, err
	}
	start := time.Now()
	envs := make([]*envelopepb.Envelope, 0, 1000)
	for i := range cfg.n {
		env, err := event.NewEnvelope(benchmsg.Spec, wrapperspb.String("ok"), key(i), event.Options{})
		if err != nil {
			tr.Close()
			return nil, "", 0, err
		}
		envs = append(envs, env)
		if len(envs) == cap(envs) || i == cfg.n-1 {
			if err := tr.PublishBatch(ctx, benchmsg.Topic, envs); err != nil {
				tr.Close()
				return nil, "", 0, err
			}
			envs = envs[:0]
		}
	}
	return tr, ns, time.Since(start), nil
}

// durability opens a business database of -db and reports its server and
// durability settings (benchmsg.Durability).
func durability(ctx context.Context, cfg config) (string, error) {
	dir, err := os.MkdirTemp("", "msgcontract-bench-kafka-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	b, err := benchmsg.OpenBusiness(ctx, cfg.db, dir)
	if err != nil {
		return "", err
	}
	defer b.Close()
	return benchmsg.Durability(ctx, b.DB, b.Dialect)
}

// runBare is the loop a team writes by hand on franz-go: poll, decode each
// record's envelope and payload, insert the batch's effects in one
// transaction (with withDedup, each after its dedup row, skipped when the
// row exists), commit, mark the offsets, which franz-go commits every
// 200 ms (the runtime's CommitInterval). With several workers the poll
// loop hands each worker the records of its partitions (partition mod
// workers), up to -fetch a transaction; each worker commits and marks its
// own, so a partition's records are written in order, one transaction at
// a time.
func runBare(ctx context.Context, cfg config, dir string, withDedup bool) (result, error) {
	tr, ns, published, err := fill(ctx, cfg)
	if err != nil {
		return result{}, err
	}
	defer tr.Close()
	b, err := benchmsg.OpenBusiness(ctx, cfg.db, dir)
	if err != nil {
		return result{}, err
	}
	defer b.Close()
	if withDedup {
		if err := benchmsg.CreateDedup(ctx, b.DB, b.Dialect); err != nil {
			return result{}, err
		}
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(cfg.brokers...), kgo.ConsumerGroup(ns+"bare"),
		kgo.ConsumeTopics(ns+benchmsg.Topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.AutoCommitMarks(), kgo.AutoCommitInterval(200*time.Millisecond), kgo.FetchMaxWait(500*time.Millisecond))
	if err != nil {
		return result{}, err
	}
	defer cl.Close()
	tx := func(recs []*kgo.Record) error {
		if err := bareTx(ctx, b, recs, withDedup); err != nil {
			return err
		}
		cl.MarkCommitRecords(recs...) // committed every 200 ms, as the runtime does
		return nil
	}
	workers := cfg.bareWorkers()
	pool := newBarePool(ctx, workers, tx)
	var start time.Time
	var cpu time.Duration
	shares := make([][]*kgo.Record, workers)
	for polled := 0; polled < cfg.n; {
		fs := cl.PollRecords(ctx, cfg.fetch*workers)
		if err := fs.Err0(); err != nil {
			pool.close()
			return result{}, err
		}
		if fs.NumRecords() == 0 {
			continue
		}
		if start.IsZero() {
			if cfg.only != "" {
				defer startProfile()()
			}
			start, cpu = time.Now(), benchstat.CPU()
		}
		for i := range shares {
			shares[i] = shares[i][:0]
		}
		fs.EachPartition(func(p kgo.FetchTopicPartition) {
			w := int(p.Partition) % workers
			shares[w] = append(shares[w], p.Records...)
			polled += len(p.Records)
		})
		for w, recs := range shares {
			for len(recs) > 0 {
				n := min(len(recs), cfg.fetch)
				if err := pool.do(w, slices.Clone(recs[:n])); err != nil {
					return result{}, err
				}
				recs = recs[n:]
			}
		}
	}
	if err := pool.close(); err != nil {
		return result{}, err
	}
	elapsed, cpu := time.Since(start), benchstat.CPU()-cpu
	return result{consume: elapsed, publish: published, cpu: cpu}, checkEffects(ctx, b.DB, cfg.n)
}

// barePool runs a bare side's transactions: on the poll loop's goroutine
// with one worker (one loop, as before workers), else on a goroutine a
// worker, each taking its batches in order. A worker queues up to
// bareQueue batches, so that the poll loop seldom waits for one worker
// while the others have nothing to do (a poll may bring one partition's
// records only).
type barePool struct {
	tx     func([]*kgo.Record) error
	work   []chan []*kgo.Record
	failed chan struct{} // closed on the first error
	once   sync.Once
	err    error
	wg     sync.WaitGroup
}

func newBarePool(ctx context.Context, workers int, tx func([]*kgo.Record) error) *barePool {
	p := &barePool{tx: tx, failed: make(chan struct{})}
	if workers == 1 {
		return p
	}
	for range workers {
		ch := make(chan []*kgo.Record, bareQueue)
		p.work = append(p.work, ch)
		p.wg.Go(func() {
			for recs := range ch {
				if err := tx(recs); err != nil {
					p.fail(err)
					for range ch { // drain: the poll loop stops at the next batch
					}
					return
				}
			}
		})
	}
	return p
}

func (p *barePool) fail(err error) {
	p.once.Do(func() {
		p.err = err
		close(p.failed)
	})
}

// bareQueue is how many batches a bare worker may be behind.
const bareQueue = 64

// do runs recs on worker w (waiting while w is bareQueue batches behind),
// or reports the first error of any worker.
func (p *barePool) do(w int, recs []*kgo.Record) error {
	if p.work == nil {
		return p.tx(recs)
	}
	select {
	case p.work[w] <- recs:
		return nil
	case <-p.failed:
		p.close()
		return p.err
	}
}

// close waits for the workers to finish their batches and reports the
// first error.
func (p *barePool) close() error {
	for _, ch := range p.work {
		close(ch)
	}
	p.work = nil
	p.wg.Wait()
	return p.err
}

// bareTx is one transaction of runBare.
func bareTx(ctx context.Context, b *benchmsg.Business, recs []*kgo.Record, withDedup bool) error {
	tx, err := b.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, r := range recs {
		if err := benchmsg.BareHandle(ctx, tx, b.Dialect, r.Value, withDedup); err != nil {
			return err
		}
	}
	return tx.Commit()
}

func runRuntime(ctx context.Context, cfg config, dir string) (result, error) {
	tr, _, published, err := fill(ctx, cfg)
	if err != nil {
		return result{}, err
	}
	defer tr.Close()
	b, err := benchmsg.OpenBusiness(ctx, cfg.db, dir)
	if err != nil {
		return result{}, err
	}
	defer b.Close()
	m, err := metrics.New(prometheus.NewRegistry())
	if err != nil {
		return result{}, err
	}
	c, err := consumer.New(consumer.Config{DB: b.DB, Dialect: b.Dialect, Subscriber: tr, Workers: cfg.workers,
		FetchSize: cfg.fetch, Metrics: m, Logger: slog.New(slog.DiscardHandler)})
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
	go func() { done <- c.Run(runCtx) }()
	for benchmsg.Processed(m) == 0 {
		time.Sleep(time.Millisecond)
	}
	defer startProfile()()
	start, cpu := time.Now(), benchstat.CPU()
	for benchmsg.Processed(m) < cfg.n {
		time.Sleep(time.Millisecond)
	}
	elapsed, cpu := time.Since(start), benchstat.CPU()-cpu
	cancel()
	if err := <-done; err != nil {
		return result{}, err
	}
	return result{consume: elapsed, publish: published, cpu: cpu}, checkEffects(ctx, b.DB, cfg.n)
}

// startProfile starts the CPU profile of -cpuprofile if it has not run
// yet (one profile per file: the first run's) and returns its stop.
func startProfile() (stop func()) {
	if profile == nil {
		return func() {}
	}
	_ = pprof.StartCPUProfile(profile)
	profile = nil
	return pprof.StopCPUProfile
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
