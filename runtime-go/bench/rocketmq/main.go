// Command rocketmq measures what effectively-once costs on Apache
// RocketMQ. Every side reads the same -n envelopes from a fresh topic of
// the RocketMQ at $MSGCONTRACT_ROCKETMQ_NAMESRV and $MSGCONTRACT_ROCKETMQ_BROKER
// (scripts/with-rocketmq.sh), published in the transport's wire format
// (docs/rocketmq.md) before the side starts (timed apart and printed, never
// counted):
//
//   - rocketmq-bare: the loop a team writes by hand on rocketmq-client-go:
//     a push consumer whose callback gets up to -prefetch messages, decodes
//     each envelope and payload and inserts each effect in one SQLite
//     transaction, commits and answers CONSUME_SUCCESS (one callback at a
//     time: SQLite has one writer, and the runtime's default is one worker
//     on SQLite);
//   - rocketmq-bare-dedup: the same, also writing each message's dedup row
//     (the runtime's msg_dedup table, INSERT ... ON CONFLICT DO NOTHING,
//     the effect only when the row is new): what the claim write costs;
//   - rocketmq-runtime: the runtime on the rocketmq transport in its
//     default mode with fetches of up to -prefetch (decode, claim, handler,
//     one transaction per fetch, savepoints only after a failure, each
//     message settled after the commit).
//
// Each side is timed from its first effect to its last. The sides run
// interleaved, one after the other in each of -runs runs, in one process;
// medians are reported. Last come
//
//	ratio rocketmq-runtime/rocketmq-bare-dedup=X (...)  the headline
//	ratio rocketmq-runtime/rocketmq-bare=Y (...)
//
// (time per message of the runtime over the bare loop).
//
//	bash scripts/with-rocketmq.sh bash -c 'cd runtime-go && go run ./bench/rocketmq -n 50000'
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	rmq "github.com/apache/rocketmq-client-go/v2"
	rmqconsumer "github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/msgcontract/msgcontract/runtime-go/bench/internal/benchmsg"
	"github.com/msgcontract/msgcontract/runtime-go/bench/internal/benchstat"
	"github.com/msgcontract/msgcontract/runtime-go/event"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb"
	"github.com/msgcontract/msgcontract/runtime-go/transport/rocketmq"
)

// group is the consumer group of every side; each run has its own
// namespace, so its topic and group are fresh.
const group = "bench"

type config struct {
	nameServer, broker string
	n, prefetch, runs  int
}

func main() {
	var cfg config
	flag.IntVar(&cfg.n, "n", 50000, "messages")
	flag.IntVar(&cfg.prefetch, "prefetch", 256, "messages per transaction at most, on every side (the runtime's fetch size, the bare callback's batch)")
	flag.IntVar(&cfg.runs, "runs", 3, "repetitions; the median of each side is reported")
	flag.Parse()
	cfg.nameServer, cfg.broker = os.Getenv("MSGCONTRACT_ROCKETMQ_NAMESRV"), os.Getenv("MSGCONTRACT_ROCKETMQ_BROKER")
	if cfg.nameServer == "" || cfg.broker == "" {
		fmt.Fprintln(os.Stderr, "bench-rocketmq: MSGCONTRACT_ROCKETMQ_NAMESRV and MSGCONTRACT_ROCKETMQ_BROKER are not set: run it through scripts/with-rocketmq.sh (make bench-runtime TRANSPORT=rocketmq)")
		os.Exit(2)
	}
	if cfg.prefetch < 1 || cfg.prefetch > 1024 {
		fmt.Fprintf(os.Stderr, "bench-rocketmq: -prefetch %d: want 1 to 1024 (the client's largest callback batch)\n", cfg.prefetch)
		os.Exit(2)
	}
	if err := run(cfg); err != nil {
		fmt.Fprintln(os.Stderr, "bench-rocketmq:", err)
		os.Exit(1)
	}
}

func run(cfg config) error {
	ctx := context.Background()
	sides := []benchmsg.Side{
		{Name: "rocketmq-bare", Note: fmt.Sprintf("rocketmq-client-go push consumer, one callback at a time with up to %d messages: decode, INSERT, one transaction per callback, CONSUME_SUCCESS", cfg.prefetch),
			Run: func(ctx context.Context, dir string) (benchmsg.Result, error) { return runBare(ctx, cfg, dir, false) }},
		{Name: "rocketmq-bare-dedup", Note: "the same plus the dedup row per message",
			Run: func(ctx context.Context, dir string) (benchmsg.Result, error) { return runBare(ctx, cfg, dir, true) }},
		{Name: "rocketmq-runtime", Note: fmt.Sprintf("default mode: one transaction per fetch, default workers, fetch=%d", cfg.prefetch),
			Run: func(ctx context.Context, dir string) (benchmsg.Result, error) { return runRuntime(ctx, cfg, dir) }},
	}
	fmt.Printf("%d messages, one topic of 4 queues, transactions of up to %d, medians of %d runs; publish timed apart\n", cfg.n, cfg.prefetch, cfg.runs)
	medians, err := benchmsg.RunInterleaved(ctx, sides, cfg.runs, cfg.n, "msgcontract-bench-rocketmq-")
	if err != nil {
		return err
	}
	fmt.Println(benchstat.Ratio("rocketmq-runtime", "rocketmq-bare-dedup", cfg.n, medians["rocketmq-runtime"], medians["rocketmq-bare-dedup"]))
	fmt.Println(benchstat.Ratio("rocketmq-runtime", "rocketmq-bare", cfg.n, medians["rocketmq-runtime"], medians["rocketmq-bare"]))
	return nil
}

func key(i int) string { return "order:" + strconv.Itoa(i) + ":PAID" }

// fill creates a transport under a fresh namespace and sends n envelopes
// to the bench topic in the transport's wire format, with up to 1,000
// asynchronous sends outstanding (one synchronous send at a time would
// take minutes a side), and waits for every answer: all n are stored
// before a side starts.
func fill(ctx context.Context, cfg config) (*rocketmq.Transport, string, time.Duration, error) {
	ns := fmt.Sprintf("bench%d_", time.Now().UnixNano())
	tr, err := rocketmq.New(ctx, rocketmq.Config{NameServers: []string{cfg.nameServer}, Brokers: []string{cfg.broker}, Namespace: ns,
		MaxInFlight: cfg.prefetch, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return nil, "", 0, err
	}
	prod, err := rmq.NewProducer(producer.WithNsResolver(primitive.NewPassthroughResolver([]string{cfg.nameServer})),
		producer.WithGroupName(ns+"fill"), producer.WithQueueSelector(producer.NewHashQueueSelector()))
	if err == nil {
		err = prod.Start()
	}
	if err != nil {
		tr.Close()
		return nil, "", 0, fmt.Errorf("fill: producer: %w", err)
	}
	defer prod.Shutdown()
	start := time.Now()
	var (
		wg       sync.WaitGroup
		slots    = make(chan struct{}, 1000)
		mu       sync.Mutex
		firstErr error
	)
	for i := range cfg.n {
		env, err := event.NewEnvelope(benchmsg.Spec, wrapperspb.String("ok"), key(i), event.Options{})
		if err != nil {
			return nil, "", 0, err
		}
		m, err := tr.Message(ctx, benchmsg.Topic, env)
		if err != nil {
			return nil, "", 0, err
		}
		slots <- struct{}{}
		wg.Add(1)
		err = prod.SendAsync(ctx, func(_ context.Context, res *primitive.SendResult, err error) {
			defer func() { <-slots; wg.Done() }()
			if err == nil && res.Status != primitive.SendOK {
				err = fmt.Errorf("send status %d", res.Status)
			}
			if err != nil {
				mu.Lock()
				firstErr = cmpErr(firstErr, err)
				mu.Unlock()
			}
		}, m)
		if err != nil {
			<-slots
			wg.Done()
			return nil, "", 0, fmt.Errorf("fill: send: %w", err)
		}
	}
	wg.Wait()
	if firstErr != nil {
		tr.Close()
		return nil, "", 0, fmt.Errorf("fill: %w", firstErr)
	}
	return tr, ns, time.Since(start), nil
}

func cmpErr(first, err error) error {
	if first != nil {
		return first
	}
	return err
}

// runBare is the loop a team writes by hand on rocketmq-client-go (see
// the package doc).
func runBare(ctx context.Context, cfg config, dir string, withDedup bool) (benchmsg.Result, error) {
	tr, ns, published, err := fill(ctx, cfg)
	if err != nil {
		return benchmsg.Result{}, err
	}
	defer tr.Close()
	db, err := benchmsg.OpenEffects(ctx, filepath.Join(dir, "bare.db"))
	if err != nil {
		return benchmsg.Result{}, err
	}
	defer db.Close()
	if withDedup {
		if err := benchmsg.CreateDedup(ctx, db, sqldb.SQLite); err != nil {
			return benchmsg.Result{}, err
		}
	}
	var (
		done      atomic.Int64
		txs       atomic.Int64
		startOnce sync.Once
		start     time.Time
		cpu       time.Duration
		failed    = make(chan error, 1)
	)
	pc, err := rmq.NewPushConsumer(
		rmqconsumer.WithNsResolver(primitive.NewPassthroughResolver([]string{cfg.nameServer})),
		rmqconsumer.WithGroupName(ns+group), rmqconsumer.WithConsumeFromWhere(rmqconsumer.ConsumeFromFirstOffset),
		rmqconsumer.WithConsumeMessageBatchMaxSize(cfg.prefetch), rmqconsumer.WithPullBatchSize(int32(cfg.prefetch)),
		rmqconsumer.WithConsumeGoroutineNums(1))
	if err != nil {
		return benchmsg.Result{}, err
	}
	err = pc.Subscribe(ns+benchmsg.Topic, rmqconsumer.MessageSelector{}, func(ctx context.Context, msgs ...*primitive.MessageExt) (rmqconsumer.ConsumeResult, error) {
		startOnce.Do(func() { start, cpu = time.Now(), benchstat.CPU() })
		if err := benchmsg.BareTx(ctx, db, msgs, func(m *primitive.MessageExt) []byte { return m.Body }, withDedup); err != nil {
			select {
			case failed <- err:
			default:
			}
			return rmqconsumer.ConsumeRetryLater, nil
		}
		txs.Add(1)
		done.Add(int64(len(msgs)))
		return rmqconsumer.ConsumeSuccess, nil
	})
	if err != nil {
		return benchmsg.Result{}, err
	}
	if err := pc.Start(); err != nil {
		return benchmsg.Result{}, err
	}
	defer pc.Shutdown()
	for done.Load() < int64(cfg.n) {
		select {
		case err := <-failed:
			return benchmsg.Result{}, err
		case <-time.After(time.Millisecond):
		}
	}
	elapsed, cpu := time.Since(start), benchstat.CPU()-cpu
	return benchmsg.Result{Consume: elapsed, Publish: published, CPU: cpu, Txs: int(txs.Load())}, benchmsg.CheckEffects(ctx, db, cfg.n)
}

// runRuntime is the runtime on the rocketmq transport (benchmsg.RunRuntime).
func runRuntime(ctx context.Context, cfg config, dir string) (benchmsg.Result, error) {
	tr, _, published, err := fill(ctx, cfg)
	if err != nil {
		return benchmsg.Result{}, err
	}
	defer tr.Close()
	r, err := benchmsg.RunRuntime(ctx, tr, dir, group, 0, cfg.prefetch, cfg.n, nil)
	r.Publish = published
	return r, err
}
