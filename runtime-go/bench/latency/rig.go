package main

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/msgcontract/msgcontract/runtime-go/bench/internal/benchmsg"
	"github.com/msgcontract/msgcontract/runtime-go/consumer"
	"github.com/msgcontract/msgcontract/runtime-go/event"
	"github.com/msgcontract/msgcontract/runtime-go/outbox"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb/mysqldb"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb/pgdb"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb/sqlitedb"
	"github.com/msgcontract/msgcontract/runtime-go/tracing"
	"github.com/msgcontract/msgcontract/runtime-go/transport"
	"github.com/msgcontract/msgcontract/runtime-go/transport/kafka"
	"github.com/msgcontract/msgcontract/runtime-go/transport/natsjs"
	"github.com/msgcontract/msgcontract/runtime-go/transport/natsjs/natsserver"
	"github.com/msgcontract/msgcontract/runtime-go/transport/sqlitequeue"
)

// The servers a case may need, as the with-* scripts export them.
const (
	envKafka = "MSGCONTRACT_KAFKA_BROKERS"
	envPG    = "MSGCONTRACT_PG_DSN"
	envMySQL = "MSGCONTRACT_MYSQL_DSN"
)

const group = "latency"

// pubSub is a transport both sides use.
type pubSub interface {
	transport.Publisher
	transport.Subscriber
}

// rig is one case's running system: producer and consumer databases, the
// broker, a relay and a consumer, and the clock of every message.
type rig struct {
	c        benchCase
	dialect  sqldb.Dialect
	producer *sql.DB
	relay    *outbox.Relay
	clock    *clock
	cancel   context.CancelFunc
	done     sync.WaitGroup
	closers  []func()
}

// openRig starts everything for c and returns once the consumer runs.
func openRig(ctx context.Context, c benchCase) (_ *rig, err error) {
	r := &rig{c: c, clock: newClock()}
	defer func() {
		if err != nil {
			r.close()
		}
	}()
	dir, err := os.MkdirTemp("", "msgcontract-bench-latency-")
	if err != nil {
		return nil, err
	}
	r.closers = append(r.closers, func() { os.RemoveAll(dir) })
	var consumerDB *sql.DB
	if r.producer, r.dialect, err = r.openDB(c.db, dir, "producer"); err != nil {
		return nil, err
	}
	if consumerDB, _, err = r.openDB(c.db, dir, "consumer"); err != nil {
		return nil, err
	}
	if err := outbox.Migrate(ctx, r.producer, r.dialect); err != nil {
		return nil, err
	}
	if _, err := r.producer.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS orders (id VARCHAR(64) PRIMARY KEY, created_at BIGINT NOT NULL)`); err != nil {
		return nil, err
	}
	if err := benchmsg.CreateEffects(ctx, consumerDB); err != nil {
		return nil, err
	}
	tr, system, err := r.openTransport(ctx, dir)
	if err != nil {
		return nil, err
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(r.clock))
	r.closers = append(r.closers, func() { _ = tp.Shutdown(context.Background()) })
	if r.relay, err = outbox.NewRelay(outbox.RelayConfig{DB: r.producer, Dialect: r.dialect, Publisher: tr, Logger: quiet,
		Tracer: tracing.New(tp, system)}); err != nil {
		return nil, err
	}
	cons, err := consumer.New(consumer.Config{DB: consumerDB, Dialect: r.dialect, Subscriber: tr, Group: group,
		Tracer: tracing.New(tp, system), Logger: quiet})
	if err != nil {
		return nil, err
	}
	err = consumer.Register(cons, benchmsg.Handler, benchmsg.Spec, func() *wrapperspb.StringValue { return &wrapperspb.StringValue{} },
		func(ctx context.Context, tx *sql.Tx, m *wrapperspb.StringValue) error {
			return benchmsg.InsertEffect(ctx, tx, m.GetValue())
		})
	if err != nil {
		return nil, err
	}
	runCtx, cancel := context.WithCancel(ctx)
	r.cancel = cancel
	r.done.Add(2)
	go func() { defer r.done.Done(); _ = r.relay.Run(runCtx) }()
	go func() { defer r.done.Done(); _ = cons.Run(runCtx) }()
	return r, r.ready(ctx)
}

// ready produces one message and waits for its effect: the consumer has
// joined and the topics exist.
func (r *rig) ready(ctx context.Context) error {
	id, err := r.produce(ctx, "ready", time.Now())
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	return r.clock.wait(ctx, []string{id})
}

// produce runs one producer transaction: the business row and the outbox
// row, committed; then it wakes the relay. due is when it was scheduled.
func (r *rig) produce(ctx context.Context, key string, due time.Time) (string, error) {
	env, err := event.NewEnvelope(benchmsg.Spec, wrapperspb.String(key), key, event.Options{})
	if err != nil {
		return "", err
	}
	id := env.GetMessageId()
	r.clock.start(id, due)
	tx, err := r.producer.BeginTx(ctx, nil)
	if err != nil {
		return "", err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO orders (id, created_at) VALUES ($1, $2)`, key, due.UnixMilli()); err != nil {
		tx.Rollback()
		return "", err
	}
	if err := outbox.Write(ctx, tx, env); err != nil {
		tx.Rollback()
		return "", err
	}
	if err := tx.Commit(); err != nil {
		return "", err
	}
	r.clock.mark(id, stageCommitted, time.Now())
	r.relay.Notify()
	return id, nil
}

func (r *rig) close() {
	if r.cancel != nil {
		r.cancel()
		r.done.Wait()
	}
	for i := len(r.closers) - 1; i >= 0; i-- {
		r.closers[i]()
	}
}

// openDB opens a fresh database of kind for role: a SQLite file in dir, a
// PostgreSQL schema, a MariaDB database.
func (r *rig) openDB(kind, dir, role string) (*sql.DB, sqldb.Dialect, error) {
	name := fmt.Sprintf("latency_%s_%d", role, time.Now().UnixNano())
	switch kind {
	case "postgres":
		admin, err := pgdb.Open(os.Getenv(envPG))
		if err != nil {
			return nil, 0, err
		}
		defer admin.Close()
		if _, err := admin.Exec("CREATE SCHEMA " + name); err != nil {
			return nil, 0, err
		}
		u, err := url.Parse(os.Getenv(envPG))
		if err != nil {
			return nil, 0, fmt.Errorf("%s must be a postgres:// URL: %w", envPG, err)
		}
		q := u.Query()
		q.Set("search_path", name)
		u.RawQuery = q.Encode()
		db, err := pgdb.Open(u.String())
		if err != nil {
			return nil, 0, err
		}
		r.closers = append(r.closers, func() { db.Close(); dropWith(pgdb.Open, os.Getenv(envPG), "DROP SCHEMA "+name+" CASCADE") })
		return db, sqldb.Postgres, nil
	case "mysql":
		cfg, err := mysqldb.ParseDSN(os.Getenv(envMySQL))
		if err != nil {
			return nil, 0, fmt.Errorf("%s: %w", envMySQL, err)
		}
		admin, err := mysqldb.Open(cfg.FormatDSN())
		if err != nil {
			return nil, 0, err
		}
		defer admin.Close()
		if _, err := admin.Exec("CREATE DATABASE " + name); err != nil {
			return nil, 0, err
		}
		adminDSN := cfg.FormatDSN()
		cfg.DBName = name
		db, err := mysqldb.Open(cfg.FormatDSN())
		if err != nil {
			return nil, 0, err
		}
		r.closers = append(r.closers, func() { db.Close(); dropWith(mysqldb.Open, adminDSN, "DROP DATABASE "+name) })
		return db, sqldb.MySQL, nil
	default:
		db, err := sqlitedb.Open(filepath.Join(dir, role+".db"))
		if err != nil {
			return nil, 0, err
		}
		r.closers = append(r.closers, func() { db.Close() })
		return db, sqldb.SQLite, nil
	}
}

// dropWith runs one statement on a connection of its own.
func dropWith(open func(string) (*sql.DB, error), dsn, stmt string) {
	if db, err := open(dsn); err == nil {
		_, _ = db.Exec(stmt)
		db.Close()
	}
}

// openTransport starts the case's transport and returns it with its
// messaging.system.
func (r *rig) openTransport(ctx context.Context, dir string) (pubSub, string, error) {
	switch r.c.transport {
	case "nats":
		ns, err := natsserver.Start(filepath.Join(dir, "nats"))
		if err != nil {
			return nil, "", err
		}
		r.closers = append(r.closers, ns.Close)
		nc, err := ns.Connect()
		if err != nil {
			return nil, "", err
		}
		r.closers = append(r.closers, nc.Close)
		tr, err := natsjs.New(ctx, natsjs.Config{Conn: nc})
		if err != nil {
			return nil, "", err
		}
		return tr, "nats", nil
	case "kafka":
		tr, err := kafka.New(ctx, kafka.Config{Brokers: strings.Split(os.Getenv(envKafka), ","),
			Namespace: fmt.Sprintf("latency%d.", time.Now().UnixNano()), Partitions: 4})
		if err != nil {
			return nil, "", err
		}
		r.closers = append(r.closers, func() { tr.Close() })
		return tr, "kafka", nil
	default:
		tr, err := sqlitequeue.Open(ctx, filepath.Join(dir, "queue.db"), sqlitequeue.Config{})
		if err != nil {
			return nil, "", err
		}
		r.closers = append(r.closers, func() { tr.Close() })
		return tr, "msgcontract_sqlite", nil
	}
}

// clock holds each message's due time and, as a span processor, takes the
// end of the consumer span of every handled delivery as its effect commit.
type clock struct {
	mu      sync.Mutex
	due     map[string]time.Time
	latency map[string]time.Duration
	waiters map[string]chan struct{}
	// stages holds, per message, when the producer committed and when
	// the relay's publish returned; stageTimes, per finished message,
	// the three legs (producer, relay, consumer).
	stages     map[string]*[2]time.Time
	stageTimes map[string][3]time.Duration
}

// The stages a message passes before its effect.
const (
	stageCommitted = iota // the producer transaction committed
	stagePublished        // the broker acknowledged the relay's publish
)

func newClock() *clock {
	return &clock{due: map[string]time.Time{}, latency: map[string]time.Duration{}, waiters: map[string]chan struct{}{},
		stages: map[string]*[2]time.Time{}, stageTimes: map[string][3]time.Duration{}}
}

// mark records when id passed stage.
func (c *clock) mark(id string, stage int, at time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.due[id]; !ok {
		return
	}
	st := c.stages[id]
	if st == nil {
		st = &[2]time.Time{}
		c.stages[id] = st
	}
	st[stage] = at
}

func (c *clock) start(id string, due time.Time) {
	c.mu.Lock()
	c.due[id] = due
	c.mu.Unlock()
}

// OnEnd implements sdktrace.SpanProcessor.
func (c *clock) OnEnd(s sdktrace.ReadOnlySpan) {
	if s.SpanKind() == trace.SpanKindProducer {
		for _, kv := range s.Attributes() {
			if kv.Key == tracing.KeyMessageID {
				c.mark(kv.Value.AsString(), stagePublished, s.EndTime())
			}
		}
		return
	}
	if s.SpanKind() != trace.SpanKindConsumer {
		return
	}
	var id string
	handled := false
	for _, kv := range s.Attributes() {
		switch kv.Key {
		case tracing.KeyMessageID:
			id = kv.Value.AsString()
		case tracing.KeyOutcome:
			handled = kv.Value.AsString() == "handled"
		}
	}
	if !handled {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	due, ok := c.due[id]
	if !ok {
		return
	}
	delete(c.due, id)
	c.latency[id] = s.EndTime().Sub(due)
	if st := c.stages[id]; st != nil && !st[stageCommitted].IsZero() && !st[stagePublished].IsZero() {
		c.stageTimes[id] = [3]time.Duration{st[stageCommitted].Sub(due), st[stagePublished].Sub(st[stageCommitted]),
			s.EndTime().Sub(st[stagePublished])}
	}
	delete(c.stages, id)
	if w := c.waiters[id]; w != nil {
		close(w)
		delete(c.waiters, id)
	}
}

// take removes and returns the latencies of ids, with how many have none
// yet.
func (c *clock) take(ids []string) (got []time.Duration, legs [3][]time.Duration, missing int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, id := range ids {
		if l, ok := c.latency[id]; ok {
			got = append(got, l)
			delete(c.latency, id)
		} else {
			missing++
		}
		if st, ok := c.stageTimes[id]; ok {
			for i := range legs {
				legs[i] = append(legs[i], st[i])
			}
			delete(c.stageTimes, id)
		}
	}
	return got, legs, missing
}

// wait returns when every id has its effect, or ctx ends.
func (c *clock) wait(ctx context.Context, ids []string) error {
	for _, id := range ids {
		c.mu.Lock()
		_, done := c.latency[id]
		var w chan struct{}
		if !done {
			if w = c.waiters[id]; w == nil {
				w = make(chan struct{})
				c.waiters[id] = w
			}
		}
		c.mu.Unlock()
		if w == nil {
			continue
		}
		select {
		case <-w:
		case <-ctx.Done():
			return fmt.Errorf("message %s has no effect: %w", id, ctx.Err())
		}
	}
	return nil
}

func (c *clock) OnStart(context.Context, sdktrace.ReadWriteSpan) {}
func (c *clock) Shutdown(context.Context) error                  { return nil }
func (c *clock) ForceFlush(context.Context) error                { return nil }
