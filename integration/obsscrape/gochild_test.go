//go:build obs

package obsscrape

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/msgcontract/msgcontract/runtime-go/backoff"
	"github.com/msgcontract/msgcontract/runtime-go/classify"
	"github.com/msgcontract/msgcontract/runtime-go/consumer"
	"github.com/msgcontract/msgcontract/runtime-go/envelopepb"
	"github.com/msgcontract/msgcontract/runtime-go/event"
	"github.com/msgcontract/msgcontract/runtime-go/metrics"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb/sqlitedb"
	"github.com/msgcontract/msgcontract/runtime-go/transport/sqlitequeue"
)

// traceparent is the producer's W3C trace context on message b in every
// language; its ids must reach the log lines as trace_id and span_id.
const traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

// goChild is the Go side: the scenario of testdata/ObsMain.java and
// testdata/obs_python.py on runtime-go's consumer over the embedded queue,
// then /metrics on an ephemeral loopback port, printed as "port N", until
// stdin closes.
func goChild() error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dir, err := os.MkdirTemp("", "obsscrape-go-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	db, err := sqlitedb.Open(filepath.Join(dir, "business.db"))
	if err != nil {
		return err
	}
	defer db.Close()
	queue, err := sqlitequeue.Open(ctx, filepath.Join(dir, "queue.db"), sqlitequeue.Config{PollInterval: 20 * time.Millisecond})
	if err != nil {
		return err
	}
	defer queue.Close()
	reg := prometheus.NewRegistry()
	m, err := metrics.New(reg)
	if err != nil {
		return err
	}
	reg.MustRegister(metrics.NewDLQCollector(queue, 5*time.Second))
	spec := &event.Spec{FullName: "msgcontract.v1.LastError", Topic: "obs", EventType: "OBS_EVENT",
		Policy: backoff.Policy{BaseMs: 1000, Multiplier: 2, MaxDelayMs: 60000, MaxRetries: 1},
		Rules:  classify.Rules{Ranges: []classify.Range{{From: 50000, To: 59999, Retryable: true, Name: "system"}}}}
	c, err := consumer.New(consumer.Config{DB: db, Dialect: sqldb.SQLite, Subscriber: queue, Group: "obs",
		Metrics: m, Logger: slog.New(slog.NewJSONHandler(os.Stderr, nil))})
	if err != nil {
		return err
	}
	err = consumer.Register(c, "obs", spec, func() *envelopepb.LastError { return &envelopepb.LastError{} },
		func(ctx context.Context, _ *sql.Tx, msg *envelopepb.LastError) error {
			env, _ := consumer.EnvelopeFrom(ctx)
			if msg.GetRange() == "b" && env.GetRetryCount() == 0 {
				return classify.NewError(50301, "ledger down")
			}
			return nil
		})
	if err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	a, err := event.NewEnvelope(spec, &envelopepb.LastError{Range: "a"}, "range:a", event.Options{})
	if err != nil {
		return err
	}
	b, err := event.NewEnvelope(spec, &envelopepb.LastError{Range: "b"}, "range:b", event.Options{})
	if err != nil {
		return err
	}
	b.Trace = &envelopepb.TraceContext{Traceparent: traceparent}
	for _, env := range []*envelopepb.Envelope{a, a, b} {
		if err := queue.Publish(ctx, spec.Topic, env); err != nil {
			return err
		}
	}
	if err := queue.PublishRaw(ctx, spec.Topic, []byte("not an envelope")); err != nil {
		return err
	}
	count := func(v *prometheus.CounterVec, handler, eventType string) float64 {
		return testutil.ToFloat64(v.WithLabelValues(handler, eventType))
	}
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if count(m.Processed, "obs", "OBS_EVENT") == 2 && count(m.Deduped, "obs", "OBS_EVENT") == 1 &&
			count(m.Retried, "obs", "OBS_EVENT") == 1 && count(m.DeadLettered, "", "") == 1 {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the scenario did not settle in 60 s")
		}
	}
	cancel()
	if err := <-done; err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: promhttp.HandlerFor(reg, promhttp.HandlerOpts{}), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	fmt.Printf("port %d\n", ln.Addr().(*net.TCPAddr).Port)
	// Until the test closes stdin.
	_, _ = bufio.NewReader(os.Stdin).ReadString(0)
	return srv.Close()
}
