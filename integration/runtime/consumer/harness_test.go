package consumer_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/msgcontract/msgcontract/runtime-go/backoff"
	"github.com/msgcontract/msgcontract/runtime-go/classify"
	"github.com/msgcontract/msgcontract/runtime-go/consumer"
	"github.com/msgcontract/msgcontract/runtime-go/dlq"
	"github.com/msgcontract/msgcontract/runtime-go/envelopepb"
	"github.com/msgcontract/msgcontract/runtime-go/event"
	"github.com/msgcontract/msgcontract/runtime-go/metrics"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb/pgdb"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb/sqlitedb"
	"github.com/msgcontract/msgcontract/runtime-go/transport"
	"github.com/msgcontract/msgcontract/runtime-go/transport/sqlitequeue"
)

// Codes of the test contract's ranges.
const (
	codeBusiness int32 = 40001 // non-retryable
	codeSystem   int32 = 50001 // retryable
	handlerName        = "fault-handler"
	eventType          = "FAULT"
	topic              = "fault-topic"
)

// testRules mirrors DESIGN.md's example ranges.
var testRules = classify.Rules{
	Ranges: []classify.Range{
		{From: 40000, To: 49999, Retryable: false, Name: "business"},
		{From: 50000, To: 59999, Retryable: true, Name: "system"},
	},
	UnclassifiedRetryable: true,
}

func newSpec(p backoff.Policy) *event.Spec {
	return &event.Spec{FullName: "google.protobuf.StringValue", Topic: topic, EventType: eventType,
		Subject: "fault.v1", SchemaVersion: 1, Policy: p, Rules: testRules}
}

// fastPolicy keeps real waits short: 100 ms base, x2, 100 ms jitter.
var fastPolicy = backoff.Policy{BaseMs: 100, Multiplier: 2, JitterMs: 100, MaxDelayMs: 60_000, MaxRetries: 6}

// scaledClock is a fake clock starting at a fixed instant and running
// speed times faster than real time, so backoff delays pass quickly while
// every timestamp stays derived from one clock.
type scaledClock struct {
	base, start time.Time
	speed       time.Duration
}

func newScaledClock(speed time.Duration) *scaledClock {
	return &scaledClock{base: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC), start: time.Now(), speed: speed}
}

func (c *scaledClock) Now() time.Time { return c.base.Add(time.Since(c.start) * c.speed) }

// --- databases ---

type dbBackend struct {
	name string
	open func(t *testing.T) (*sql.DB, sqldb.Dialect)
}

var sqliteBackend = dbBackend{"sqlite", func(t *testing.T) (*sql.DB, sqldb.Dialect) {
	db, err := sqlitedb.Open(filepath.Join(t.TempDir(), "business.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, sqldb.SQLite
}}

const pgSkip = "MSGCONTRACT_PG_DSN is unset; to run the PostgreSQL cases: export MSGCONTRACT_PG_DSN=$(bash scripts/pg-start.sh)"

// postgresBackend gives each test a schema of its own in the database of
// MSGCONTRACT_PG_DSN.
var postgresBackend = dbBackend{"postgres", func(t *testing.T) (*sql.DB, sqldb.Dialect) {
	dsn := os.Getenv("MSGCONTRACT_PG_DSN")
	if dsn == "" {
		t.Skip(pgSkip)
	}
	admin, err := pgdb.Open(dsn)
	if err != nil {
		t.Fatal(err)
	}
	schema := "t_" + randHex(6)
	if _, err := admin.Exec("CREATE SCHEMA " + schema); err != nil {
		t.Fatal(err)
	}
	db, err := pgdb.Open(withSearchPath(dsn, schema))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		db.Close()
		_, _ = admin.Exec("DROP SCHEMA " + schema + " CASCADE")
		admin.Close()
	})
	return db, sqldb.Postgres
}}

func withSearchPath(dsn, schema string) string {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err == nil {
			q := u.Query()
			q.Set("search_path", schema)
			u.RawQuery = q.Encode()
			return u.String()
		}
	}
	return dsn + " search_path=" + schema
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// --- brokers ---

// broker is a transport as the tests drive it.
type broker struct {
	pub transport.Publisher
	sub transport.Subscriber
	raw func(ctx context.Context, topic string, body []byte) error
	dlq dlq.Store
	// drained reports that nothing is queued or in flight any more.
	drained func() bool
	name    string
}

type brokerKind struct {
	name string
	open func(t *testing.T, now func() time.Time) *broker
	// onDB, when set, opens the broker in the business database instead.
	onDB func(t *testing.T, db *sql.DB, now func() time.Time) *broker
}

var sqliteBroker = brokerKind{name: "sqlitequeue", open: func(t *testing.T, now func() time.Time) *broker {
	tr, err := sqlitequeue.Open(context.Background(), filepath.Join(t.TempDir(), "queue.db"),
		sqlitequeue.Config{Now: now, PollInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	return sqliteQueueBroker(tr, "sqlitequeue")
}}

// sharedSQLiteBroker keeps the queue in the business database's file, where
// the consumer reads, handles and acknowledges a fetch in one transaction
// (transport.TxFetcher) in batch mode.
var sharedSQLiteBroker = brokerKind{name: "sqlitequeue-shared", onDB: func(t *testing.T, db *sql.DB, now func() time.Time) *broker {
	tr, err := sqlitequeue.New(context.Background(), sqlitequeue.Config{DB: db, Now: now, PollInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return sqliteQueueBroker(tr, "sqlitequeue-shared")
}}

func sqliteQueueBroker(tr *sqlitequeue.Transport, name string) *broker {
	drained := func() bool {
		n, err := tr.Backlog(context.Background(), "")
		return err == nil && n == 0
	}
	return &broker{pub: tr, sub: tr, raw: tr.PublishRaw, dlq: tr, drained: drained, name: name}
}

// --- fixture ---

type handlerFunc = func(ctx context.Context, tx *sql.Tx, m *wrapperspb.StringValue) error

type fixture struct {
	t       *testing.T
	db      *sql.DB
	dialect sqldb.Dialect
	br      *broker
	m       *metrics.Prometheus
	clock   *scaledClock
	spec    *event.Spec
	calls   atomic.Int64
	// stops ends each consumer start ran and waits for its Run to return.
	stops []func()
}

func newFixture(t *testing.T, be dbBackend, bk brokerKind, p backoff.Policy) *fixture {
	t.Helper()
	db, dialect := be.open(t)
	clock := newScaledClock(1)
	m, err := metrics.New(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, db: db, dialect: dialect, m: m, clock: clock, spec: newSpec(p)}
	if bk.onDB != nil {
		f.br = bk.onDB(t, db, f.now)
	} else {
		f.br = bk.open(t, f.now)
	}
	if _, err := db.Exec(`CREATE TABLE effects (biz_key TEXT NOT NULL, retry_count INTEGER NOT NULL, note TEXT NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *fixture) now() time.Time { return f.clock.Now() }

// start runs a consumer with handle until the test ends.
func (f *fixture) start(handle handlerFunc, mutate func(*consumer.Config)) {
	f.t.Helper()
	cfg := consumer.Config{
		DB: f.db, Dialect: f.dialect, Subscriber: f.br.sub, Group: "g", Workers: 4,
		Metrics: f.m, Now: f.now, Rand: func() float64 { return 0.5 },
		HandlerTimeout: 20 * time.Second,
	}
	if _, ok := batchMode.Load(f.t.Name()); ok {
		cfg.FetchSize = 16
	} else {
		cfg.PerMessageTx, cfg.FetchSize = true, 1
	}
	if mutate != nil {
		mutate(&cfg)
	}
	c, err := consumer.New(cfg)
	if err != nil {
		f.t.Fatal(err)
	}
	err = consumer.Register(c, handlerName, f.spec, func() *wrapperspb.StringValue { return &wrapperspb.StringValue{} },
		func(ctx context.Context, tx *sql.Tx, m *wrapperspb.StringValue) error {
			f.calls.Add(1)
			return handle(ctx, tx, m)
		})
	if err != nil {
		f.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				f.t.Errorf("Run: %v", err)
			}
		})
	}
	f.stops = append(f.stops, stop)
	f.t.Cleanup(stop)
}

// insertEffect is the business write every test handler makes.
func insertEffect(ctx context.Context, tx *sql.Tx, note string) error {
	env, _ := consumer.EnvelopeFrom(ctx)
	_, err := tx.ExecContext(ctx, `INSERT INTO effects (biz_key, retry_count, note) VALUES ($1, $2, $3)`,
		env.GetBizKey(), env.GetRetryCount(), note)
	return err
}

func (f *fixture) envelope(key, value string) *envelopepb.Envelope {
	f.t.Helper()
	env, err := event.NewEnvelope(f.spec, wrapperspb.String(value), key, event.Options{OccurredAt: f.now()})
	if err != nil {
		f.t.Fatal(err)
	}
	return env
}

func (f *fixture) publish(envs ...*envelopepb.Envelope) {
	f.t.Helper()
	for _, env := range envs {
		if err := f.br.pub.Publish(context.Background(), topic, env); err != nil {
			f.t.Fatal(err)
		}
	}
}

func (f *fixture) effects() int {
	f.t.Helper()
	var n int
	if err := f.db.QueryRow(`SELECT count(*) FROM effects`).Scan(&n); err != nil {
		f.t.Fatal(err)
	}
	return n
}

func (f *fixture) count(v *prometheus.CounterVec) int {
	return int(testutil.ToFloat64(v.WithLabelValues(handlerName, eventType)))
}

// wantCount checks a counter of the test handler.
func (f *fixture) wantCount(what string, v *prometheus.CounterVec, want int) {
	f.t.Helper()
	if got := f.count(v); got != want {
		f.t.Errorf("%s = %d, want %d", what, got, want)
	}
}

func (f *fixture) deadLetters() []dlq.Record {
	f.t.Helper()
	recs, err := f.br.dlq.List(context.Background(), dlq.Filter{})
	if err != nil {
		f.t.Fatal(err)
	}
	return recs
}

// waitFor polls cond until it holds, failing the test after a generous
// deadline. It only waits; assertions come after it.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// drain waits until the broker holds nothing queued or in flight, so no
// further effect can happen, then stops the consumers: a delivery's
// metrics and logs follow its commit, so the broker may be empty while the
// last of them is still being counted. The exact counts are asserted after
// it; nothing is consumed after it.
func (f *fixture) drain() {
	f.t.Helper()
	waitFor(f.t, "the queue to drain", f.br.drained)
	for _, stop := range f.stops {
		stop()
	}
}

var dlqAll = dlq.Filter{}
