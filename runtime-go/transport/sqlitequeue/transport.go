// Package sqlitequeue is the embedded default transport: a durable queue in
// one SQLite file that several consumer processes share.
//
// Each published message becomes one row per subscribed group. A consumer
// takes rows under a lease (a visibility timeout): a row whose lease
// expired, because its process died or stalled, is delivered again to
// whoever fetches next. Rows wait until their not_before instant, which is
// how retries are delayed. Dead-lettered messages move to a table of their
// own, which the Transport exposes as a dlq.Store.
//
// Open the file with sqlitedb.Open (WAL, busy timeout, BEGIN
// IMMEDIATE); the queue may share the business database's file or live in
// its own. Sharing it lets the consumer acknowledge in the business
// transaction (transport.TxAcker) and, in its default mode, read the
// fetch there too (transport.TxFetcher).
package sqlitequeue

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/msgcontract/msgcontract/runtime-go/sqldb"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb/ddl"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb/sqlitedb"
	"github.com/msgcontract/msgcontract/runtime-go/transport"
)

// Config configures a Transport. DB is required.
type Config struct {
	// DB is the SQLite database holding the queue tables (mc_queue,
	// mc_subscriptions, mc_dead_letter); they are created if missing.
	DB *sql.DB
	// Lease is how long a fetched message stays invisible to other
	// consumers before it is redelivered. Defaults to 60 s; keep it above
	// the consumer's HandlerTimeout.
	Lease time.Duration
	// PollInterval is how often an idle subscription looks for ready
	// messages published by other processes (publishes through the same
	// Transport wake it at once). Defaults to 50 ms.
	PollInterval time.Duration
	// Now is the clock for leases and not_before. Defaults to time.Now.
	Now func() time.Time
}

func (c *Config) setDefaults() {
	if c.Lease == 0 {
		c.Lease = 60 * time.Second
	}
	if c.PollInterval == 0 {
		c.PollInterval = 50 * time.Millisecond
	}
	if c.Now == nil {
		c.Now = time.Now
	}
}

// Validate reports every missing or invalid field at once.
func (c *Config) Validate() error {
	var errs []error
	if c.DB == nil {
		errs = append(errs, errors.New("sqlitequeue: Config.DB is required (open it with sqlitedb.Open)"))
	}
	if c.Lease < 0 {
		errs = append(errs, fmt.Errorf("sqlitequeue: Lease %v is negative", c.Lease))
	}
	if c.PollInterval < 0 {
		errs = append(errs, fmt.Errorf("sqlitequeue: PollInterval %v is negative", c.PollInterval))
	}
	return errors.Join(errs...)
}

// Transport is the embedded SQLite transport. It is a
// transport.Publisher, a transport.Subscriber and a dlq.Store. It is safe
// for concurrent use.
type Transport struct {
	cfg Config
	db  *sql.DB

	mu     sync.Mutex
	wake   chan struct{} // closed and replaced on every publish
	closed bool
	ownDB  bool
}

// New validates cfg, creates the tables if missing and returns the
// Transport.
func New(ctx context.Context, cfg Config) (*Transport, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	t := &Transport{cfg: cfg, db: cfg.DB, wake: make(chan struct{})}
	if err := t.migrate(ctx); err != nil {
		return nil, err
	}
	return t, nil
}

// Open opens (creating if missing) the SQLite file at path and returns a
// Transport on it with cfg's other settings. Close closes the database.
func Open(ctx context.Context, path string, cfg Config) (*Transport, error) {
	db, err := sqlitedb.Open(path)
	if err != nil {
		return nil, err
	}
	cfg.DB = db
	t, err := New(ctx, cfg)
	if err != nil {
		db.Close()
		return nil, err
	}
	t.ownDB = true
	return t, nil
}

// DB returns the queue's database.
func (t *Transport) DB() *sql.DB { return t.db }

// Close stops the Transport's subscriptions from fetching and closes the
// database if Open opened it.
func (t *Transport) Close() error {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil
	}
	t.closed = true
	close(t.wake)
	t.mu.Unlock()
	if t.ownDB {
		return t.db.Close()
	}
	return nil
}

func (t *Transport) notify() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.closed {
		close(t.wake)
		t.wake = make(chan struct{})
	}
}

func (t *Transport) wakeChan() (<-chan struct{}, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.wake, t.closed
}

// migrate creates the queue's tables by the statements of
// contracts/sql/sqlite.sql (sqldb/ddl), which Python's asyncio SQLite
// transport runs too.
func (t *Transport) migrate(ctx context.Context) error {
	stmts, err := ddl.Statements(sqldb.SQLite, nil, queueTables...)
	if err != nil {
		return fmt.Errorf("sqlitequeue: migrate: %w", err)
	}
	for _, stmt := range stmts {
		if _, err := t.db.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("sqlitequeue: migrate: %w", err)
		}
	}
	return nil
}

// queueTables are the transport's tables, as contracts/sql/sqlite.sql
// names them.
var queueTables = []string{"mc_queue", "mc_subscriptions", "mc_dead_letter"}

// Backlog counts group's rows not yet acknowledged, leased or not,
// including rows published before any group subscribed (the first group
// to subscribe adopts them). An empty group counts every row. It
// implements transport.Backlog.
func (t *Transport) Backlog(ctx context.Context, group string) (int, error) {
	var n int
	err := t.db.QueryRowContext(ctx, `SELECT count(*) FROM mc_queue WHERE ?1 = '' OR grp = ?1 OR grp = ''`, group).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("sqlitequeue: backlog: %w", err)
	}
	return n, nil
}

var _ transport.Backlog = (*Transport)(nil)
