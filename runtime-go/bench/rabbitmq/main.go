// Command rabbitmq measures what effectively-once costs on RabbitMQ. Every
// side reads the same -n envelopes from a fresh quorum queue of the node at
// $MSGCONTRACT_TEST_RABBITMQ (scripts/with-rabbitmq.sh), published in the
// transport's wire format (docs/rabbitmq.md) before the side starts (timed
// apart and printed, never counted):
//
//   - rabbitmq-bare: the loop a team writes by hand on amqp091-go:
//     basic.consume with basic.qos(-prefetch), read -prefetch deliveries,
//     decode each envelope and payload, the business INSERT for each, in
//     one SQLite transaction per batch, commit, then one
//     basic.ack(multiple) for the batch;
//   - rabbitmq-bare-dedup: the same, also writing each message's dedup row
//     (the runtime's msg_dedup table, INSERT ... ON CONFLICT DO NOTHING,
//     the effect only when the row is new): what the claim write costs;
//   - rabbitmq-runtime: the runtime on the rabbitmq transport in its
//     default mode with fetches of up to -prefetch (basic.qos = the fetch
//     size; decode, claim, handler, one transaction per fetch, savepoints
//     only after a failure, the fetch acknowledged after the commit).
//
// -qos N (N > -prefetch) sets basic.qos to N on every side, transactions
// staying at most -prefetch: the broker then sends the next batch while
// one is handled.
//
// Each side is timed from its first effect to its last, so declaring and
// subscribing is not counted. The sides run interleaved, one after the
// other in each of -runs runs, in one process; medians are reported. Last
// come
//
//	ratio rabbitmq-runtime/rabbitmq-bare-dedup=X (...)  the headline
//	ratio rabbitmq-runtime/rabbitmq-bare=Y (...)
//
// (time per message of the runtime over the bare loop).
//
//	bash scripts/with-rabbitmq.sh bash -c 'cd runtime-go && go run ./bench/rabbitmq -n 50000'
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strconv"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/msgcontract/msgcontract/runtime-go/bench/internal/benchmsg"
	"github.com/msgcontract/msgcontract/runtime-go/bench/internal/benchstat"
	"github.com/msgcontract/msgcontract/runtime-go/envelope"
	"github.com/msgcontract/msgcontract/runtime-go/event"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb"
	"github.com/msgcontract/msgcontract/runtime-go/transport/rabbitmq"
)

// group is the consumer group of every side; each run has its own prefix,
// so its queue is fresh.
const group = "bench"

type config struct {
	url                             string
	n, workers, prefetch, qos, runs int
	only                            string
}

func main() {
	var cfg config
	flag.IntVar(&cfg.n, "n", 50000, "messages")
	flag.IntVar(&cfg.workers, "workers", 0, "runtime consumer workers; 0 keeps consumer.Config's default (1 on SQLite, whose one writer lock makes a second worker wait in the busy handler)")
	flag.IntVar(&cfg.prefetch, "prefetch", 256, "messages per transaction, and basic.qos unless -qos is set, on every side (the runtime's fetch size)")
	flag.IntVar(&cfg.qos, "qos", 0, "basic.qos on every side when it differs from -prefetch (at least -prefetch): the broker then sends the next batch while one is handled")
	flag.IntVar(&cfg.runs, "runs", 3, "repetitions; the median of each side is reported")
	flag.StringVar(&cfg.only, "only", "", "run only this side (rabbitmq-bare, rabbitmq-bare-dedup or rabbitmq-runtime; for profiling); no ratios")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the first run's consume span of the runtime side (of the -only side) to this file")
	flag.Parse()
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench-rabbitmq:", err)
			os.Exit(1)
		}
		defer f.Close()
		profile = f
	}
	cfg.url = os.Getenv("MSGCONTRACT_TEST_RABBITMQ")
	if cfg.url == "" {
		fmt.Fprintln(os.Stderr, "bench-rabbitmq: MSGCONTRACT_TEST_RABBITMQ is not set: run it through scripts/with-rabbitmq.sh (make bench-runtime TRANSPORT=rabbitmq)")
		os.Exit(2)
	}
	if cfg.qos == 0 {
		cfg.qos = cfg.prefetch
	}
	if cfg.prefetch < 1 || cfg.qos < cfg.prefetch || cfg.qos > 65535 {
		fmt.Fprintf(os.Stderr, "bench-rabbitmq: -prefetch %d and -qos %d: want 1 <= prefetch <= qos <= 65535 (basic.qos)\n", cfg.prefetch, cfg.qos)
		os.Exit(2)
	}
	if err := run(cfg); err != nil {
		fmt.Fprintln(os.Stderr, "bench-rabbitmq:", err)
		os.Exit(1)
	}
}

var profile *os.File

func run(cfg config) error {
	ctx := context.Background()
	sides := []benchmsg.Side{
		{Name: "rabbitmq-bare", Note: fmt.Sprintf("amqp091-go consume, qos %d, batches of %d: decode, INSERT, one transaction per batch, then one ack(multiple)", cfg.qos, cfg.prefetch),
			Run: func(ctx context.Context, dir string) (benchmsg.Result, error) { return runBare(ctx, cfg, dir, false) }},
		{Name: "rabbitmq-bare-dedup", Note: "the same plus the dedup row per message",
			Run: func(ctx context.Context, dir string) (benchmsg.Result, error) { return runBare(ctx, cfg, dir, true) }},
		{Name: "rabbitmq-runtime", Note: fmt.Sprintf("default mode: one transaction per fetch, workers=%s fetch=%d qos=%d", workersNote(cfg.workers), cfg.prefetch, cfg.qos),
			Run: func(ctx context.Context, dir string) (benchmsg.Result, error) { return runRuntime(ctx, cfg, dir) }},
	}
	if cfg.only != "" {
		i := slices.IndexFunc(sides, func(s benchmsg.Side) bool { return s.Name == cfg.only })
		if i < 0 {
			return fmt.Errorf("-only %q: no such side", cfg.only)
		}
		sides = sides[i : i+1]
	}
	fmt.Printf("%d messages, one quorum queue, qos %d, transactions of up to %d, medians of %d runs; publish timed apart\n", cfg.n, cfg.qos, cfg.prefetch, cfg.runs)
	medians, err := benchmsg.RunInterleaved(ctx, sides, cfg.runs, cfg.n, "msgcontract-bench-rabbitmq-")
	if err != nil || cfg.only != "" {
		return err
	}
	fmt.Println(benchstat.Ratio("rabbitmq-runtime", "rabbitmq-bare-dedup", cfg.n, medians["rabbitmq-runtime"], medians["rabbitmq-bare-dedup"]))
	fmt.Println(benchstat.Ratio("rabbitmq-runtime", "rabbitmq-bare", cfg.n, medians["rabbitmq-runtime"], medians["rabbitmq-bare"]))
	return nil
}

func workersNote(n int) string {
	if n == 0 {
		return "default"
	}
	return strconv.Itoa(n)
}

func key(i int) string { return "order:" + strconv.Itoa(i) + ":PAID" }

// fill creates a transport under a fresh prefix whose Topology declares
// the bench group's queue, and publishes n envelopes to the bench topic,
// timing the publish. The transport publishes one message per confirm
// (there is no batch publish); preloading 50,000 that way would take
// minutes a side, so fill publishes the transport's wire format itself
// (the same exchange, routing key, properties and header as
// Transport.Publish) on a confirm-mode channel with up to 1,000 confirms
// outstanding, and waits for all of them: every message is in the queue
// before a side starts.
func fill(ctx context.Context, cfg config) (*rabbitmq.Transport, string, time.Duration, error) {
	prefix := fmt.Sprintf("bench%d", time.Now().UnixNano())
	tr, err := rabbitmq.New(ctx, rabbitmq.Config{URL: cfg.url, Prefix: prefix,
		Topology: map[string][]string{benchmsg.Topic: {group}}, Prefetch: cfg.qos})
	if err != nil {
		return nil, "", 0, err
	}
	published, err := publish(ctx, cfg, prefix)
	if err != nil {
		tr.Close()
		return nil, "", 0, err
	}
	return tr, prefix, published, nil
}

func publish(ctx context.Context, cfg config, prefix string) (time.Duration, error) {
	conn, err := amqp.Dial(cfg.url)
	if err != nil {
		return 0, fmt.Errorf("fill: connect: %w", err)
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		return 0, fmt.Errorf("fill: channel: %w", err)
	}
	if err := ch.Confirm(false); err != nil {
		return 0, fmt.Errorf("fill: confirm.select: %w", err)
	}
	start := time.Now()
	var pending []*amqp.DeferredConfirmation
	wait := func(keep int) error {
		for len(pending) > keep {
			ok, err := pending[0].WaitContext(ctx)
			if err != nil {
				return fmt.Errorf("fill: confirm: %w", err)
			}
			if !ok {
				return errors.New("fill: the broker refused a publish (basic.nack); see its log")
			}
			pending = pending[1:]
		}
		return nil
	}
	for i := range cfg.n {
		env, err := event.NewEnvelope(benchmsg.Spec, wrapperspb.String("ok"), key(i), event.Options{})
		if err != nil {
			return 0, err
		}
		body, err := envelope.Marshal(env)
		if err != nil {
			return 0, err
		}
		dc, err := ch.PublishWithDeferredConfirmWithContext(ctx, prefix, benchmsg.Topic, false, false, amqp.Publishing{
			ContentType: rabbitmq.ContentType, DeliveryMode: amqp.Persistent, MessageId: event.NewMessageID(),
			Headers: amqp.Table{rabbitmq.HeaderTopic: benchmsg.Topic}, Body: body})
		if err != nil {
			return 0, fmt.Errorf("fill: publish: %w", err)
		}
		pending = append(pending, dc)
		if err := wait(1000); err != nil {
			return 0, err
		}
	}
	if err := wait(0); err != nil {
		return 0, err
	}
	return time.Since(start), nil
}

// runBare is the loop a team writes by hand on amqp091-go: consume the
// group's queue with basic.qos(qos), read prefetch deliveries (the broker
// sends no more than qos until some are acknowledged), decode each envelope and payload and
// insert the batch's effects in one transaction (with withDedup, each
// after its dedup row, skipped when the row exists), commit, then
// acknowledge the batch.
func runBare(ctx context.Context, cfg config, dir string, withDedup bool) (benchmsg.Result, error) {
	tr, prefix, published, err := fill(ctx, cfg)
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
	conn, err := amqp.Dial(cfg.url)
	if err != nil {
		return benchmsg.Result{}, err
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		return benchmsg.Result{}, err
	}
	if err := ch.Qos(cfg.qos, 0, false); err != nil {
		return benchmsg.Result{}, err
	}
	q := prefix + "/" + group + "/" + benchmsg.Topic // docs/rabbitmq.md: P/G/T
	msgs, err := ch.Consume(q, "bare", false, false, false, false, nil)
	if err != nil {
		return benchmsg.Result{}, err
	}
	var start time.Time
	var cpu time.Duration
	txs := 0
	batch := make([]amqp.Delivery, 0, cfg.prefetch)
	for done := 0; done < cfg.n; {
		// A full batch of prefetch (the last one: what is left): the
		// queue holds all n, so the broker sends qos >= prefetch
		// unacknowledged deliveries and the loop never waits for one
		// that is not coming.
		batch = batch[:0]
		for len(batch) < min(cfg.prefetch, cfg.n-done) {
			m, ok := <-msgs
			if !ok {
				return benchmsg.Result{}, errors.New("the consumer's channel closed")
			}
			batch = append(batch, m)
		}
		if start.IsZero() {
			if cfg.only != "" {
				defer startProfile()()
			}
			start, cpu = time.Now(), benchstat.CPU()
		}
		if err := benchmsg.BareTx(ctx, db, batch, func(m amqp.Delivery) []byte { return m.Body }, withDedup); err != nil {
			return benchmsg.Result{}, err
		}
		// One basic.ack with multiple=true on the batch's last delivery
		// tag settles the whole batch (every earlier tag on this channel
		// is in it or in an earlier batch): what a hand-written loop
		// does. The runtime acknowledges each delivery on its own.
		if err := ch.Ack(batch[len(batch)-1].DeliveryTag, true); err != nil {
			return benchmsg.Result{}, err
		}
		done += len(batch)
		txs++
	}
	elapsed, cpu := time.Since(start), benchstat.CPU()-cpu
	return benchmsg.Result{Consume: elapsed, Publish: published, CPU: cpu, Txs: txs}, benchmsg.CheckEffects(ctx, db, cfg.n)
}

// runRuntime is the runtime on the rabbitmq transport (benchmsg.RunRuntime).
func runRuntime(ctx context.Context, cfg config, dir string) (benchmsg.Result, error) {
	tr, _, published, err := fill(ctx, cfg)
	if err != nil {
		return benchmsg.Result{}, err
	}
	defer tr.Close()
	r, err := benchmsg.RunRuntime(ctx, tr, dir, group, cfg.workers, cfg.prefetch, cfg.n, startProfile)
	r.Publish = published
	return r, err
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
