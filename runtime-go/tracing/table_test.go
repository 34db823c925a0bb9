package tracing_test

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/msgcontract/msgcontract/runtime-go/backoff"
	"github.com/msgcontract/msgcontract/runtime-go/consumer"
	"github.com/msgcontract/msgcontract/runtime-go/envelopepb"
	"github.com/msgcontract/msgcontract/runtime-go/event"
	"github.com/msgcontract/msgcontract/runtime-go/outbox"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb/sqlitedb"
	"github.com/msgcontract/msgcontract/runtime-go/tracing"
	"github.com/msgcontract/msgcontract/runtime-go/transport"
	"github.com/msgcontract/msgcontract/runtime-go/transport/sqlitequeue"
)

// tableRow is one row of testdata/otel/messaging-spans.tsv.
type tableRow struct {
	span, name, kind string
	languages        []string
	transport, level string
	attrs            []string // key or key=a|b
}

func readTable(t *testing.T) []tableRow {
	t.Helper()
	f, err := os.Open("../../testdata/otel/messaging-spans.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []tableRow
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		c := strings.Split(line, "\t")
		if len(c) != 7 {
			t.Fatalf("table row %q: %d columns, want 7", line, len(c))
		}
		rows = append(rows, tableRow{span: c[0], name: c[1], kind: c[2], languages: strings.Split(c[3], ","),
			transport: c[4], level: c[5], attrs: strings.Split(c[6], ",")})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return rows
}

// known says which recommended attributes the test's runtime knows: the
// broker's address, a Kafka record's place.
type known struct{ server, kafka bool }

// checkTable checks every span of the runtime's scope in spans against
// the table rows for Go and system: its name and kind, every required
// attribute (and pinned value), every recommended one the runtime knows,
// error.type exactly when the status is ERROR, and nothing unlisted. Each
// span the table lists for Go must have been seen, or those of only when
// given.
func checkTable(t *testing.T, table []tableRow, spans []sdktrace.ReadOnlySpan, system string, k known, only ...string) {
	t.Helper()
	seen := map[string]bool{}
	for _, s := range spans {
		if s.InstrumentationScope().Name != tracing.ScopeName {
			continue
		}
		attrs := map[string]attribute.Value{}
		for _, a := range s.Attributes() {
			attrs[string(a.Key)] = a.Value
		}
		op := attrs["messaging.operation.type"].AsString()
		seen[op] = true
		var rows []tableRow
		for _, r := range table {
			if r.span == op && slices.Contains(r.languages, "go") && (r.transport == "*" || r.transport == system) {
				rows = append(rows, r)
			}
		}
		if len(rows) == 0 {
			t.Errorf("span %q (operation type %q): not in the table", s.Name(), op)
			continue
		}
		want := strings.ReplaceAll(rows[0].name, "{messaging.operation.name}", attrs["messaging.operation.name"].AsString())
		if d, ok := attrs["messaging.destination.name"]; ok {
			want = strings.ReplaceAll(want, "{destination}", d.AsString())
		} else {
			want = strings.TrimSuffix(want, " {destination}")
		}
		if s.Name() != want {
			t.Errorf("span %q: name, want %q", s.Name(), want)
		}
		if got := strings.ToUpper(s.SpanKind().String()); got != rows[0].kind {
			t.Errorf("span %q: kind %s, want %s", s.Name(), got, rows[0].kind)
		}
		listed := map[string]bool{}
		for _, r := range rows {
			for _, a := range r.attrs {
				key, values, pinned := strings.Cut(a, "=")
				listed[key] = true
				v, has := attrs[key]
				switch {
				case r.level == "required" && !has,
					r.level == "recommended" && !has && (k.kafka && r.transport == "kafka" || k.server && r.transport == "*"):
					t.Errorf("span %q: %s attribute %s missing", s.Name(), r.level, key)
				case r.level == "on_error" && has != (s.Status().Code == codes.Error):
					t.Errorf("span %q: %s = %v with status %v, want it exactly on ERROR", s.Name(), key, v.String(), s.Status())
				}
				if pinned && has && !slices.Contains(strings.Split(values, "|"), v.String()) {
					t.Errorf("span %q: %s = %q, want one of %q", s.Name(), key, v.String(), values)
				}
			}
		}
		for key := range attrs {
			if !listed[key] {
				t.Errorf("span %q: attribute %s is not in the table", s.Name(), key)
			}
		}
		if attrs["messaging.system"].AsString() != system {
			t.Errorf("span %q: messaging.system %q, want %q", s.Name(), attrs["messaging.system"].AsString(), system)
		}
	}
	for _, r := range table {
		if slices.Contains(r.languages, "go") && !seen[r.span] && (only == nil || slices.Contains(only, r.span)) {
			t.Errorf("no %s span seen; the table lists one for Go", r.span)
		}
	}
}

// settled reports whether spans hold both consumer spans and the ack of
// the handled attempt.
func settled(spans []sdktrace.ReadOnlySpan) bool {
	process, acks := 0, 0
	for _, s := range spans {
		switch {
		case strings.HasPrefix(s.Name(), "process "):
			process++
		case strings.HasPrefix(s.Name(), "ack "):
			acks++
		}
	}
	return process == 2 && acks >= 1
}

// located dresses a transport as a partitioned log: its deliveries carry
// partition 3 and offsets from 40, as a Kafka record would.
type located struct{ transport.Subscriber }

func (l located) Subscribe(ctx context.Context, group string, topics []string) (transport.Subscription, error) {
	sub, err := l.Subscriber.Subscribe(ctx, group, topics)
	return &locatedSub{Subscription: sub}, err
}

type locatedSub struct {
	transport.Subscription
	next atomic.Int64
}

func (s *locatedSub) Fetch(ctx context.Context, max int) ([]*transport.Delivery, error) {
	ds, err := s.Subscription.Fetch(ctx, max)
	for _, d := range ds {
		d.Partition, d.Offset = 3, 40+s.next.Add(1)-1
	}
	return ds, err
}

// A send the broker refused and a delivery whose payload does not decode:
// both spans fail, with the error.type of the table (the relay's _OTHER,
// the dead letter's runtime code -3), and match the table otherwise.
func TestFailedSpansCarryErrorType(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rec, tp := recorded(t)
	tracer := tracing.New(tp, "msgcontract_sqlite", tracing.WithServer("broker.test", 4222))
	db := openBusiness(ctx, t, t.TempDir())
	queue, err := sqlitequeue.New(ctx, sqlitequeue.Config{DB: db, PollInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer queue.Close()
	spec := &event.Spec{FullName: "msgcontract.v1.LastError", Topic: "orders", EventType: "ORDER_PAID",
		Policy: backoff.Policy{BaseMs: 10, Multiplier: 2, MaxDelayMs: 100, MaxRetries: 3}}

	// The relay: the broker refuses the row.
	env := writeOutbox(ctx, t, db, spec)
	relay, err := outbox.NewRelay(outbox.RelayConfig{DB: db, Dialect: sqldb.SQLite, Publisher: refusing{}, Tracer: tracer})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := relay.Flush(ctx); err == nil {
		t.Fatal("the relay's flush did not fail")
	}

	// The consumer: a payload that does not decode is dead-lettered.
	env.Payload = []byte{0xff, 0x01}
	if err := queue.Publish(ctx, "orders", env); err != nil {
		t.Fatal(err)
	}
	consume(ctx, t, db, queue, tracer, spec, func(context.Context, *sql.Tx, *envelopepb.LastError) error { return nil },
		func() bool {
			return slices.ContainsFunc(rec.Ended(), func(s sdktrace.ReadOnlySpan) bool { return strings.HasPrefix(s.Name(), "process ") })
		})

	got := map[string]string{}
	for _, s := range rec.Ended() {
		for _, a := range s.Attributes() {
			if a.Key == tracing.KeyErrorType {
				got[s.Name()] = a.Value.AsString()
			}
		}
	}
	if want := map[string]string{"send orders": "_OTHER", "process orders": "-3"}; !maps.Equal(got, want) {
		t.Errorf("error.type by span: %v, want %v", got, want)
	}
	checkTable(t, readTable(t), rec.Ended(), "msgcontract_sqlite", known{server: true}, "send", "process")
}

// The relay's batch path (a run of rows of one topic in one PublishBatch)
// starts one send span per row, as the row-by-row path does.
func TestBatchSendSpansMatchTheTable(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rec, tp := recorded(t)
	db := openBusiness(ctx, t, t.TempDir())
	queue, err := sqlitequeue.New(ctx, sqlitequeue.Config{DB: db})
	if err != nil {
		t.Fatal(err)
	}
	defer queue.Close()
	spec := &event.Spec{FullName: "msgcontract.v1.LastError", Topic: "orders", EventType: "ORDER_PAID"}
	for range 3 {
		writeOutbox(ctx, t, db, spec)
	}
	relay, err := outbox.NewRelay(outbox.RelayConfig{DB: db, Dialect: sqldb.SQLite, Publisher: queue,
		Tracer: tracing.New(tp, "msgcontract_sqlite", tracing.WithServer("broker.test", 4222))})
	if err != nil {
		t.Fatal(err)
	}
	if n, err := relay.Flush(ctx); err != nil || n != 3 {
		t.Fatalf("relay flush: %d %v", n, err)
	}
	if n := len(rec.Ended()); n != 3 {
		t.Errorf("%d spans, want a send span per row (3)", n)
	}
	checkTable(t, readTable(t), rec.Ended(), "msgcontract_sqlite", known{server: true}, "send")
}

// recorded returns a TracerProvider whose spans rec records, shut down
// with the test.
func recorded(t *testing.T) (*tracetest.SpanRecorder, *sdktrace.TracerProvider) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return rec, tp
}

// openBusiness opens dir's business database, with the outbox, for the
// test's duration.
func openBusiness(ctx context.Context, t *testing.T, dir string) *sql.DB {
	t.Helper()
	db, err := sqlitedb.Open(filepath.Join(dir, "business.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := outbox.Migrate(ctx, db, sqldb.SQLite); err != nil {
		t.Fatal(err)
	}
	return db
}

// writeOutbox writes an event of spec to db's outbox in a transaction of
// ctx (whose span the envelope carries) and returns its envelope.
func writeOutbox(ctx context.Context, t *testing.T, db *sql.DB, spec *event.Spec) *envelopepb.Envelope {
	t.Helper()
	env, err := event.NewEnvelope(spec, &envelopepb.LastError{Range: "o1"}, "order:o1", event.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := outbox.Write(ctx, tx, env); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	return env
}

// consume runs a traced consumer of group "payments" with handler for
// spec's events until done reports true or ctx ends.
func consume(ctx context.Context, t *testing.T, db *sql.DB, sub transport.Subscriber, tracer *tracing.Tracer,
	spec *event.Spec, handler func(context.Context, *sql.Tx, *envelopepb.LastError) error, done func() bool) {
	t.Helper()
	c, err := consumer.New(consumer.Config{DB: db, Dialect: sqldb.SQLite, Subscriber: sub, Group: "payments",
		Tracer: tracer, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if err := consumer.Register(c, "record", spec, func() *envelopepb.LastError { return &envelopepb.LastError{} }, handler); err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	ran := make(chan error, 1)
	go func() { ran <- c.Run(runCtx) }()
	for ctx.Err() == nil && !done() {
		time.Sleep(10 * time.Millisecond)
	}
	stop()
	if err := <-ran; err != nil {
		t.Fatal(err)
	}
}

// refusing is a broker that refuses every message.
type refusing struct{}

func (refusing) Publish(context.Context, string, *envelopepb.Envelope) error {
	return errors.New("broker down")
}
