package consumer_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/msgcontract/msgcontract/runtime-go/classify"
	"github.com/msgcontract/msgcontract/runtime-go/consumer"
	"github.com/msgcontract/msgcontract/runtime-go/dlq"
	"github.com/msgcontract/msgcontract/runtime-go/event"
	"github.com/msgcontract/msgcontract/runtime-go/transport/sqlitequeue"
)

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	_, err := consumer.New(consumer.Config{Workers: -1})
	if err == nil {
		t.Fatal("want an error")
	}
	for _, want := range []string{"DB is required", "Dialect", "Subscriber is required", "Workers -1"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

func TestRegisterErrors(t *testing.T) {
	t.Parallel()
	f := newFixture(t, sqliteBackend, sqliteBroker, fastPolicy)
	c, err := consumer.New(consumer.Config{DB: f.db, Dialect: f.dialect, Subscriber: f.br.sub})
	if err != nil {
		t.Fatal(err)
	}
	newMsg := func() *wrapperspb.StringValue { return &wrapperspb.StringValue{} }
	ok := func(context.Context, *sql.Tx, *wrapperspb.StringValue) error { return nil }
	if err := consumer.Register(c, "h", f.spec, newMsg, ok); err != nil {
		t.Fatal(err)
	}
	bad := *f.spec
	bad.Policy.MaxRetries = 99
	for name, err := range map[string]error{
		"duplicate route": consumer.Register(c, "h2", f.spec, newMsg, ok),
		"empty name":      consumer.Register(c, "", f.spec, newMsg, ok),
		"bad policy":      consumer.Register(c, "h3", &bad, newMsg, ok),
		"no topic":        consumer.Register(c, "h4", &event.Spec{EventType: "X"}, newMsg, ok),
	} {
		if err == nil {
			t.Errorf("%s: want an error", name)
		}
	}
}

// A panicking handler is recovered and classified with CodePanic, which
// lies outside every range: the unclassified setting (retryable here)
// applies. The consumer keeps running.
func TestPanicIsAnError(t *testing.T) {
	t.Parallel()
	p := fastPolicy
	p.MaxRetries = 1
	f := newFixture(t, sqliteBackend, sqliteBroker, p)
	f.clock = newScaledClock(10)
	f.start(func(ctx context.Context, tx *sql.Tx, m *wrapperspb.StringValue) error {
		panic("boom")
	}, nil)
	f.publish(f.envelope("order:p", "x"))
	waitFor(t, "dead-lettered", func() bool { return f.count(f.m.DeadLettered) == 1 })
	f.drain()
	if got := f.count(f.m.Retried); got != 1 {
		t.Errorf("retried = %d, want 1", got)
	}
	r := f.deadLetters()[0]
	if r.Code != consumer.CodePanic || r.Reason != dlq.ReasonRetriesExhausted || !strings.Contains(r.Error, "panic: boom") {
		t.Errorf("record: code %d reason %s error %q", r.Code, r.Reason, r.Error)
	}
}

// A handler that overruns HandlerTimeout and returns its context's error
// fails with CodeTimeout.
func TestHandlerTimeout(t *testing.T) {
	t.Parallel()
	p := fastPolicy
	p.MaxRetries = 0
	f := newFixture(t, sqliteBackend, sqliteBroker, p)
	f.start(func(ctx context.Context, tx *sql.Tx, m *wrapperspb.StringValue) error {
		<-ctx.Done()
		return ctx.Err()
	}, func(c *consumer.Config) { c.HandlerTimeout = 50 * time.Millisecond })
	f.publish(f.envelope("order:t", "x"))
	waitFor(t, "dead-lettered", func() bool { return f.count(f.m.DeadLettered) == 1 })
	if r := f.deadLetters()[0]; r.Code != consumer.CodeTimeout || r.Attempts != 1 {
		t.Errorf("record: code %d attempts %d", r.Code, r.Attempts)
	}
}

// A duplicate whose payload differs is acknowledged without its handler,
// and counted as a key conflict, not as deduplicated (the outcomes are
// disjoint).
func TestKeyConflict(t *testing.T) {
	t.Parallel()
	f := newFixture(t, sqliteBackend, sqliteBroker, fastPolicy)
	f.publish(f.envelope("order:c", "first"))
	f.start(func(ctx context.Context, tx *sql.Tx, m *wrapperspb.StringValue) error {
		return insertEffect(ctx, tx, m.GetValue())
	}, func(c *consumer.Config) { c.Workers = 1 })
	waitFor(t, "processed", func() bool { return f.count(f.m.Processed) == 1 })
	f.publish(f.envelope("order:c", "second"), f.envelope("order:c", "first"))
	waitFor(t, "settled", func() bool { return f.count(f.m.Deduped)+f.count(f.m.KeyConflicts) == 2 })
	f.drain()
	if got := f.count(f.m.Deduped); got != 1 {
		t.Errorf("deduplicated = %d, want 1", got)
	}
	if got := f.count(f.m.KeyConflicts); got != 1 {
		t.Errorf("key conflicts = %d, want 1", got)
	}
	if got := f.effects(); got != 1 {
		t.Errorf("effects = %d, want 1", got)
	}
}

// A message of an event type nobody handles is dead-lettered, not lost and
// not redelivered forever.
func TestNoHandler(t *testing.T) {
	t.Parallel()
	f := newFixture(t, sqliteBackend, sqliteBroker, fastPolicy)
	f.start(func(ctx context.Context, tx *sql.Tx, m *wrapperspb.StringValue) error { return nil }, nil)
	env := f.envelope("order:n", "x")
	env.EventType = "UNKNOWN"
	f.publish(env)
	waitFor(t, "a dead letter", func() bool { return len(f.deadLetters()) == 1 })
	if r := f.deadLetters()[0]; r.Reason != dlq.ReasonNoHandler || r.Code != consumer.CodeNoHandler {
		t.Errorf("record: %+v", r)
	}
}

// Graceful shutdown lets the in-flight handler finish and commit.
func TestGracefulShutdown(t *testing.T) {
	t.Parallel()
	f := newFixture(t, sqliteBackend, sqliteBroker, fastPolicy)
	c, err := consumer.New(consumer.Config{DB: f.db, Dialect: f.dialect, Subscriber: f.br.sub, Metrics: f.m})
	if err != nil {
		t.Fatal(err)
	}
	entered, release := make(chan struct{}), make(chan struct{})
	err = consumer.Register(c, handlerName, f.spec, func() *wrapperspb.StringValue { return &wrapperspb.StringValue{} },
		func(ctx context.Context, tx *sql.Tx, m *wrapperspb.StringValue) error {
			close(entered)
			<-release
			return insertEffect(ctx, tx, "slow")
		})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	f.publish(f.envelope("order:g", "x"))
	<-entered
	cancel()
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := f.effects(); got != 1 {
		t.Errorf("effects = %d, want 1: the in-flight message must finish", got)
	}
	f.drain()
}

// One consumer serves several topics and event types concurrently.
func TestSeveralTopics(t *testing.T) {
	t.Parallel()
	f := newFixture(t, sqliteBackend, sqliteBroker, fastPolicy)
	c, err := consumer.New(consumer.Config{DB: f.db, Dialect: f.dialect, Subscriber: f.br.sub, Metrics: f.m, Workers: 4})
	if err != nil {
		t.Fatal(err)
	}
	var specs []*event.Spec
	for _, tp := range []string{"t1", "t2", "t3"} {
		spec := *f.spec
		spec.Topic = tp
		specs = append(specs, &spec)
		err := consumer.Register(c, "h-"+tp, &spec, func() *wrapperspb.StringValue { return &wrapperspb.StringValue{} },
			func(ctx context.Context, tx *sql.Tx, m *wrapperspb.StringValue) error {
				return insertEffect(ctx, tx, m.GetValue())
			})
		if err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	defer func() { cancel(); <-done }()
	for i := range 60 {
		spec := specs[i%3]
		env, err := event.NewEnvelope(spec, wrapperspb.String("v"), fmt.Sprintf("k%d", i), event.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := f.br.pub.Publish(ctx, spec.Topic, env); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "60 effects", func() bool { return f.effects() == 60 })
	f.drain()
	if got := f.effects(); got != 60 {
		t.Errorf("effects = %d, want 60", got)
	}
}

// A handler running longer than the transport's lease keeps its message:
// the consumer extends the lease, so no other worker gets it meanwhile.
func TestLeaseExtension(t *testing.T) {
	t.Parallel()
	for _, batch := range []bool{false, true} {
		t.Run(fmt.Sprint("batch=", batch), func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, sqliteBackend, sqliteBroker, fastPolicy)
			tr, err := sqlitequeue.Open(context.Background(), filepath.Join(t.TempDir(), "short-lease.db"),
				sqlitequeue.Config{Lease: 1500 * time.Millisecond, PollInterval: 10 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			defer tr.Close()
			f.br = &broker{pub: tr, sub: tr, raw: tr.PublishRaw, dlq: tr, name: "short-lease",
				drained: func() bool { n, err := tr.Backlog(context.Background(), ""); return err == nil && n == 0 }}
			f.publish(f.envelope("order:slow", "x"))
			f.start(func(ctx context.Context, tx *sql.Tx, m *wrapperspb.StringValue) error {
				// More than two leases, past HandlerTimeout: a handler
				// ignoring its context is waited for.
				time.Sleep(3500 * time.Millisecond)
				return insertEffect(context.WithoutCancel(ctx), tx, "slow")
			}, func(c *consumer.Config) {
				c.Workers, c.PerMessageTx, c.FetchSize, c.HandlerTimeout = 4, !batch, 4, time.Second
			})
			waitFor(t, "processed", func() bool { return f.count(f.m.Processed) == 1 })
			f.drain()
			if got := f.calls.Load(); got != 1 {
				t.Errorf("handler runs = %d, want 1: the message was redelivered while in flight", got)
			}
			if got := f.count(f.m.Deduped); got != 0 {
				t.Errorf("deduped = %d, want 0", got)
			}
		})
	}
}

// last_error stays bounded: a huge error message is cut to
// MaxErrorMessage bytes at a UTF-8 boundary, and nothing accumulates
// across retries.
func TestLastErrorBounded(t *testing.T) {
	t.Parallel()
	p := fastPolicy
	p.MaxRetries = 2
	f := newFixture(t, sqliteBackend, sqliteBroker, p)
	f.clock = newScaledClock(10)
	huge := strings.Repeat("é", 5000) // two bytes each
	var sizes []int
	var mu sync.Mutex
	f.start(func(ctx context.Context, tx *sql.Tx, m *wrapperspb.StringValue) error {
		env, _ := consumer.EnvelopeFrom(ctx)
		mu.Lock()
		if le := env.GetLastError(); le != nil {
			if !utf8.ValidString(le.GetMessage()) {
				t.Error("last_error cut inside a UTF-8 sequence")
			}
			sizes = append(sizes, len(le.GetMessage()))
		}
		mu.Unlock()
		return classify.NewError(codeSystem, huge)
	}, nil)
	f.publish(f.envelope("order:big", "x"))
	waitFor(t, "dead-lettered", func() bool { return f.count(f.m.DeadLettered) == 1 })
	mu.Lock()
	defer mu.Unlock()
	if len(sizes) != 2 {
		t.Fatalf("saw %d retries, want 2", len(sizes))
	}
	for _, n := range sizes {
		if n > consumer.MaxErrorMessage || n < consumer.MaxErrorMessage-3 {
			t.Errorf("last_error message is %d bytes, want at most %d", n, consumer.MaxErrorMessage)
		}
	}
	if r := f.deadLetters()[0]; len(r.Error) > consumer.MaxErrorMessage {
		t.Errorf("dead-letter error is %d bytes", len(r.Error))
	}
}

// The queue may live in the business database's own SQLite file.
func TestQueueInBusinessFile(t *testing.T) {
	t.Parallel()
	for _, batch := range []bool{false, true} {
		t.Run(fmt.Sprint("batch=", batch), func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, sqliteBackend, sharedSQLiteBroker, fastPolicy)
			f.clock = newScaledClock(10)
			for i := range 40 {
				f.publish(f.envelope(fmt.Sprintf("order:s%d", i%30), fmt.Sprint(i)))
			}
			f.start(func(ctx context.Context, tx *sql.Tx, m *wrapperspb.StringValue) error {
				env, _ := consumer.EnvelopeFrom(ctx)
				if env.GetRetryCount() == 0 && m.GetValue() == "7" {
					return classify.NewError(codeSystem, "transient")
				}
				return insertEffect(ctx, tx, m.GetValue())
			}, func(c *consumer.Config) { c.PerMessageTx, c.FetchSize = !batch, 8 })
			waitFor(t, "30 effects", func() bool { return f.effects() == 30 })
			f.drain()
			if got := f.effects(); got != 30 {
				t.Errorf("effects = %d, want 30", got)
			}
			// The ten repeated keys carry other payloads: key conflicts.
			if got := f.count(f.m.Processed) + f.count(f.m.Deduped) + f.count(f.m.KeyConflicts); got != 40 {
				t.Errorf("handled+deduplicated+conflict = %d, want 40", got)
			}
		})
	}
}

// A message is routed, retried and dead-lettered by the topic it was
// delivered from, even when its envelope names another.
func TestDeliveryTopicDecides(t *testing.T) {
	t.Parallel()
	for _, bk := range []brokerKind{sqliteBroker, natsBroker} {
		t.Run(bk.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, sqliteBackend, bk, fastPolicy)
			f.clock = newScaledClock(10)
			f.start(func(ctx context.Context, tx *sql.Tx, m *wrapperspb.StringValue) error {
				env, _ := consumer.EnvelopeFrom(ctx)
				if env.GetRetryCount() == 0 {
					return classify.NewError(codeSystem, "once")
				}
				return insertEffect(ctx, tx, m.GetValue())
			}, nil)
			env := f.envelope("order:x", "x")
			env.Topic = "somewhere-else"
			f.publish(env)
			waitFor(t, "processed", func() bool { return f.count(f.m.Processed) == 1 })
			f.drain()
			if got := f.effects(); got != 1 {
				t.Errorf("effects = %d, want 1", got)
			}
		})
	}
}
