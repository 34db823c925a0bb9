package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/msgcontract/msgcontract/codegen/model"
	javabuild "github.com/msgcontract/msgcontract/conformance/toolchain/java"
	pybuild "github.com/msgcontract/msgcontract/conformance/toolchain/python"
	"github.com/msgcontract/msgcontract/examples/go-consumer/paymentsvc"
	"github.com/msgcontract/msgcontract/runtime-go/backoff"
	"github.com/msgcontract/msgcontract/runtime-go/metrics"
	"github.com/msgcontract/msgcontract/runtime-go/outbox"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb/sqlitedb"
	"github.com/msgcontract/msgcontract/runtime-go/tracing"
)

// Config selects the demo's size and transport.
type Config struct {
	Orders    int
	Transport string
	// Brokers are the Kafka brokers (host:port, comma-separated) of
	// -transport kafka.
	Brokers string
	// RabbitMQ is the AMQP URL (amqp://user:password@host:5672/) of
	// -transport rabbitmq.
	RabbitMQ string
	// RocketMQ locates the broker of -transport rocketmq.
	RocketMQ RocketMQAddrs
	WorkDir  string
	Verbose  bool
	// OTLP is the OTLP/HTTP endpoint (http://host:port) every service
	// exports its spans to; "" runs without tracing.
	OTLP string
	// JaegerUI is Jaeger's query service (http://host:port): the result's
	// trace links point at its API, and the demo's trace view reads it.
	JaegerUI string
	// Heartbeat, when positive, prints "... still <step> (45s)" at this
	// interval while a step runs (a Java or Python build on a slow
	// machine takes minutes), so a run is never silent for long.
	Heartbeat time.Duration
}

// Paths of the demo's pieces, relative to the repository root.
const (
	protoDir     = "examples/proto"
	paymentProto = "examples/proto/shop/payment/v1/payment.proto"
	javaProducer = "examples/java-producer/src/main/java/com/example/shop/orders/OrderService.java"
	pythonDir    = "examples/python-consumer"
	topic        = "order-event"
	// ledgerOutage is how many ledger calls fail with 503 before it recovers.
	ledgerOutage = 6
)

// pythonService is the Python reconciliation service: its main module
// and the NATS JetStream adapter it imports under --nats.
var pythonService = []string{"reconciliation.py", "natsqueue.py"}

// reconGroup is the Python service's consumer group (GROUP in
// reconciliation.py).
const reconGroup = "reconciliation"

// groups are the two consumer groups; each gets every event.
var groups = []string{paymentsvc.Group, reconGroup}

// demoPolicy shortens the contract's retry policy (1 s base, 6 retries) so
// the demo ends in seconds; the schedule's shape is the contract's.
var demoPolicy = backoff.Policy{BaseMs: 100, Multiplier: 2, JitterMs: 50, MaxDelayMs: 1600, MaxRetries: 4}

// Run runs the whole scenario and returns its result.
func Run(ctx context.Context, cfg Config, out io.Writer) (*Result, error) {
	if !slices.Contains(transports, cfg.Transport) {
		return nil, fmt.Errorf("transport %q: want one of %v", cfg.Transport, transports)
	}
	if cfg.Orders < 8 {
		return nil, fmt.Errorf("--orders %d: need at least 8 to include refunds and the illegal refund", cfg.Orders)
	}
	start := time.Now()
	work, err := filepath.Abs(cfg.WorkDir)
	if err != nil {
		return nil, err
	}
	if err := os.RemoveAll(work); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(work, 0o755); err != nil {
		return nil, err
	}
	if _, ok := out.(*os.File); !ok {
		// This goroutine, the Go services' loggers on theirs and, for a
		// writer that is no file, os/exec's goroutines copying the
		// Python and Java services' output all write to out.
		out = &lockedWriter{w: out}
	}
	var stopBeat func()
	step := func(format string, args ...any) {
		if stopBeat != nil {
			stopBeat()
		}
		fmt.Fprintf(out, "==> "+format+"\n", args...)
		stopBeat = heartbeat(out, cfg.Heartbeat, fmt.Sprintf(format, args...))
	}
	defer func() {
		if stopBeat != nil {
			stopBeat()
		}
	}()

	step("loading and linting the contracts (%s)", protoDir)
	set, err := model.Load(ctx, model.Config{ImportPaths: []string{protoDir}},
		paymentProto, "examples/proto/shop/inventory/v1/inventory.proto")
	if err != nil {
		return nil, err
	}
	if len(set.Diagnostics) > 0 {
		return nil, set.Diagnostics
	}

	step("schema registry: register the contract, then try a breaking change")
	registry, err := startRegistry(work)
	if err != nil {
		return nil, fmt.Errorf("registry: %w", err)
	}
	defer registry.Close()
	rejected, err := registryStep(out, registry.URL, paymentProto)
	if err != nil {
		return nil, fmt.Errorf("registry: %w", err)
	}

	step("building the Java order service with generated Java (javac -Xlint:all -Werror)")
	javaSrc, err := os.ReadFile(javaProducer)
	if err != nil {
		return nil, err
	}
	javaTools, err := javabuild.Resolve(ctx)
	if err != nil {
		return nil, fmt.Errorf("java toolchain: %w", err)
	}
	defer javaTools.Close()
	jb, err := javaTools.Compile(ctx, set, []string{protoDir}, filepath.Join(work, "java"),
		map[string]string{"com/example/shop/orders/OrderService.java": string(javaSrc)})
	if err != nil {
		return nil, fmt.Errorf("java build: %w", err)
	}
	step("building the Python reconciliation service with generated Python (mypy --strict)")
	pyExtra := map[string]string{}
	for _, f := range pythonService {
		src, err := os.ReadFile(filepath.Join(pythonDir, f))
		if err != nil {
			return nil, err
		}
		pyExtra[f] = string(src)
	}
	pb, err := pybuild.Compile(ctx, set, []string{protoDir}, filepath.Join(work, "python"), filepath.Join(work, "mypy-cache"), pyExtra)
	if err != nil {
		return nil, fmt.Errorf("python build: %w", err)
	}

	logLevel := slog.LevelError // alerts only: illegal transitions
	if cfg.Verbose {
		logLevel = slog.LevelInfo
	}
	logger := slog.New(slog.NewTextHandler(out, &slog.HandlerOptions{Level: logLevel}))
	ordersPath := filepath.Join(work, "orders.db")
	paymentPath, reconPath := filepath.Join(work, "payment.db"), filepath.Join(work, "reconciliation.db")
	tr, err := openTransport(ctx, cfg, work, registry.URL)
	if err != nil {
		return nil, err
	}
	defer tr.Close()
	step("starting %s, the outbox relay, the ledger and both consumers", tr.describe())
	// Both groups subscribe before anything is published, so each gets
	// every event.
	for _, g := range groups {
		sub, err := tr.Subscribe(ctx, g, []string{topic})
		if err != nil {
			return nil, err
		}
		sub.Close()
	}
	ordersDB, err := sqlitedb.Open(ordersPath)
	if err != nil {
		return nil, err
	}
	defer ordersDB.Close()
	if err := outbox.Migrate(ctx, ordersDB, sqldb.SQLite); err != nil {
		return nil, err
	}
	paymentDB, err := sqlitedb.Open(paymentPath)
	if err != nil {
		return nil, err
	}
	defer paymentDB.Close()
	if err := paymentsvc.Migrate(ctx, paymentDB); err != nil {
		return nil, err
	}
	if r, ok := tr.(*rocketmqTransport); ok {
		r.outstanding = settledByOutcome(r, ordersDB, paymentDB, reconPath)
	}
	led, err := startLedger(ledgerOutage)
	if err != nil {
		return nil, err
	}
	defer led.close()

	var traces *demoTracing
	javaCP, javaEnv, pyEnv := jb.Classpath(), withoutOTLP(os.Environ()), []string{}
	if cfg.OTLP != "" {
		step("tracing: every service exports its spans to %s (OTLP/HTTP)", cfg.OTLP)
		if traces, err = startTracing(ctx, cfg.OTLP, messagingSystem(cfg.Transport)); err != nil {
			return nil, err
		}
		defer traces.shutdown(context.WithoutCancel(ctx))
		cp, env, err := javaTracing(ctx, cfg.OTLP, work)
		if err != nil {
			return nil, err
		}
		javaCP = strings.Join(append([]string{javaCP}, cp...), string(os.PathListSeparator))
		javaEnv = append(javaEnv, env...)
		pyEnv = []string{otlpEnv + "=" + cfg.OTLP}
	}
	var relayTracer, paymentTracer *tracing.Tracer
	if traces != nil {
		relayTracer, paymentTracer = traces.relay, traces.payment
	}

	runCtx, stopServices := context.WithCancel(ctx)
	defer stopServices()
	relay, err := outbox.NewRelay(outbox.RelayConfig{DB: ordersDB, Dialect: sqldb.SQLite, Publisher: tr,
		PollInterval: 20 * time.Millisecond, Logger: logger, Tracer: relayTracer})
	if err != nil {
		return nil, err
	}
	reg := prometheus.NewRegistry()
	met, err := metrics.New(reg)
	if err != nil {
		return nil, err
	}
	svc, err := paymentsvc.New(paymentsvc.Config{DB: paymentDB, Subscriber: tr, LedgerURL: led.URL,
		Policy: &demoPolicy, Logger: logger, Metrics: met, Tracer: paymentTracer})
	if err != nil {
		return nil, err
	}
	done := make(chan error, 2)
	go func() { done <- relay.Run(runCtx) }()
	go func() { done <- svc.Run(runCtx) }()
	pyArgs := append([]string{filepath.Join(pb.Root, pythonService[0])}, tr.pythonArgs()...)
	py := pb.Command(runCtx, append(pyArgs, "--db", reconPath, "--retry-base-ms", "100")...)
	py.Env = append(withoutOTLP(py.Env), pyEnv...)
	py.Cancel = func() error { return py.Process.Signal(os.Interrupt) }
	py.WaitDelay = 10 * time.Second
	py.Stdout, py.Stderr = out, out
	if err := py.Start(); err != nil {
		return nil, err
	}
	pyDone := make(chan error, 1)
	go func() { pyDone <- py.Wait() }()

	java := func(phase string) error {
		cmd := exec.CommandContext(ctx, jb.Tools.Java, "-cp", javaCP, "com.example.shop.orders.OrderService",
			ordersPath, phase, fmt.Sprint(cfg.Orders))
		cmd.Stdout, cmd.Stderr, cmd.Env = out, out, javaEnv
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("java order service, phase %s: %w", phase, err)
		}
		return drain(ctx, ordersDB, tr, pyDone)
	}
	step("phase 1: %d orders paid (every event published 2-3 times); the ledger fails its first %d calls", cfg.Orders, ledgerOutage)
	if err := java("pay"); err != nil {
		return nil, err
	}
	step("a poison message (not an envelope) lands on %s", topic)
	if err := tr.PublishRaw(ctx, topic, []byte("\xff\xfe this is not an envelope")); err != nil {
		return nil, err
	}
	step("phase 2: customers of every 4th order ask for a refund")
	if err := java("refund-request"); err != nil {
		return nil, err
	}
	step("phase 3: the provider confirms those refunds, and one refund nobody requested")
	if err := java("refund"); err != nil {
		return nil, err
	}
	stopServices()
	// Wait reports the cancellation that stopped it; the exit status says
	// whether it stopped cleanly.
	if err := <-pyDone; err != nil && py.ProcessState.ExitCode() != 0 {
		return nil, fmt.Errorf("python reconciliation service: %w", err)
	}
	for i := 0; i < 2; i++ {
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			return nil, err
		}
	}
	res, err := summarize(ctx, ordersDB, paymentDB, reconPath, tr, reg)
	if err != nil {
		return nil, err
	}
	if k, ok := tr.(*kafkaTransport); ok {
		if res.Framing, err = k.framing(ctx); err != nil {
			return nil, err
		}
		res.DLQ = k.dlqAddr()
	}
	if r, ok := tr.(*rabbitmqTransport); ok {
		res.DLQ = r.dlqAddr()
	}
	if r, ok := tr.(*rocketmqTransport); ok {
		res.DLQ = r.dlqAddr()
	}
	res.RegistryRejected = rejected
	res.LedgerCalls, res.LedgerFailures = led.stats()
	if traces != nil {
		if err := traces.shutdown(ctx); err != nil {
			return nil, err
		}
		res.TraceOrder = led.firstFailedOrder()
		if res.TraceOrder == "" {
			res.TraceOrder = "20250101_0001"
		}
		if res.TraceID, err = payTrace(ctx, ordersDB, res.TraceOrder); err != nil {
			return nil, err
		}
		res.JaegerUI = cfg.JaegerUI
	}
	res.Elapsed = time.Since(start)
	res.Print(out)
	return res, nil
}

// drain waits until the outbox is published and every group's queue is
// empty (retries included), stable over several polls.
func drain(ctx context.Context, ordersDB *sql.DB, tr demoTransport, pyDone <-chan error) error {
	deadline := time.Now().Add(2 * time.Minute)
	quiet := 0
	for quiet < 5 {
		select {
		case err := <-pyDone:
			return fmt.Errorf("python reconciliation service exited early: %v", err)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		pending, err := outbox.Pending(ctx, ordersDB)
		if err != nil {
			return err
		}
		queued, err := tr.queued(ctx, groups)
		if err != nil {
			return err
		}
		if pending == 0 && queued == 0 {
			quiet++
		} else {
			quiet = 0
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not drained after 2 minutes: %d outbox rows pending, %d queued", pending, queued)
		}
	}
	return nil
}

// lockedWriter is w written by one goroutine at a time.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// heartbeat prints "    ... still <what> (30s)" to out every interval
// until the returned function is called (which waits for the last line);
// a non-positive interval prints nothing.
func heartbeat(out io.Writer, interval time.Duration, what string) func() {
	if interval <= 0 {
		return func() {}
	}
	what, _, _ = strings.Cut(what, " (")
	done, exited := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(exited)
		start := time.Now()
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				fmt.Fprintf(out, "    ... still %s (%s)\n", what, time.Since(start).Round(time.Second))
			}
		}
	}()
	return func() { close(done); <-exited }
}
