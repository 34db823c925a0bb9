package consumer

import (
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/msgcontract/msgcontract/runtime-go/dedup"
	"github.com/msgcontract/msgcontract/runtime-go/metrics"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb"
	"github.com/msgcontract/msgcontract/runtime-go/tracing"
	"github.com/msgcontract/msgcontract/runtime-go/transport"
)

// Config configures a Consumer. DB, Dialect and Subscriber are required;
// every other field has the default its comment states.
type Config struct {
	// DB is the business database: handlers get transactions on it, and
	// the dedup claims live in it.
	DB *sql.DB
	// Dialect of DB.
	Dialect sqldb.Dialect
	// Subscriber is the transport the consumer receives from.
	Subscriber transport.Subscriber
	// Group names the subscription group; consumers of one group share
	// the work. Defaults to "default".
	Group string
	// Workers is the number of fetches processed concurrently, each in
	// its own transaction on a connection of its own; a key's deliveries
	// are handed out one at a time, in order, so they never meet in two
	// workers. Defaults to 8 on PostgreSQL and MySQL, where a
	// transaction waits for the server at every statement and at its
	// commit's flush, so that the others keep the CPU busy meanwhile
	// (bench/kafka on two cores at load 7-11: 8 workers made 13-16k msg/s on
	// PostgreSQL where 4 made 11-12k); to 1 on SQLite: it has one writer,
	// so handler transactions take turns anyway and more workers only
	// wait in SQLite's busy handler. Keep DB's idle connections
	// (sql.DB.SetMaxIdleConns, 2 by default) at Workers or more, or
	// connections are closed and opened again between transactions.
	Workers int
	// FetchSize is how many deliveries a worker takes from the transport
	// at once; they are processed one after the other in one shared
	// transaction (each in its own with PerMessageTx). Leased deliveries
	// have their leases extended while the worker is busy with them.
	// Defaults to 64.
	FetchSize int
	// PerMessageTx runs every message in a transaction of its own. By
	// default the messages of one fetch share one transaction (and one
	// acknowledgement): one claim statement for all, then the handlers,
	// each inside a savepoint of its own, so a failing message rolls back
	// alone (its writes and its claim go, nobody else's) and the others
	// commit: a handler runs once per delivery attempt. A failed commit hands the
	// whole fetch back. A fetch returns what is ready, so under light load
	// a transaction holds one message and latency is that of PerMessageTx;
	// under load the commits are shared. Handlers must not rely on being
	// alone in their transaction; set PerMessageTx when they do. When the
	// subscription's queue lives in DB (sqlitequeue on the business file)
	// the fetch is also read inside that transaction, so the common case
	// writes no lease and commits once (DESIGN.md, "Transactions").
	// Defaults to false.
	PerMessageTx bool
	// HandlerTimeout bounds one handler run through its context; a
	// handler that ignores its context is waited for. It must be shorter than the
	// transport's lease (Run checks). Defaults to 30 s.
	HandlerTimeout time.Duration
	// InfraRetryDelay is how long a message waits when the database
	// itself failed (begin, claim or commit): it is handed back to the
	// transport without counting a retry. Defaults to 1 s.
	InfraRetryDelay time.Duration
	// DedupTable defaults to dedup.DefaultTable.
	DedupTable string
	// DedupRetention defaults to dedup.DefaultRetention (7 days).
	DedupRetention time.Duration
	// CleanupInterval is how often claims older than DedupRetention are
	// deleted. Defaults to 1 h; negative disables the cleanup.
	CleanupInterval time.Duration
	// Prefilter, when set, answers step 3 for keys whose claim it has
	// recorded as committed, saving the database round trip; see
	// dedup.Prefilter and dedup/redisfilter. It is not asked when a fetch
	// is read inside the business transaction (see PerMessageTx), where
	// one claim statement answers the whole fetch. Defaults to nil.
	Prefilter dedup.Prefilter
	// SkipMigrate leaves the dedup table's creation to the caller. By
	// default Run creates it if missing.
	SkipMigrate bool
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// Metrics defaults to nil: nothing recorded.
	Metrics *metrics.Prometheus
	// Tracer, when set, starts a consumer span per delivery that continues
	// the envelope's trace (package tracing); nil traces nothing.
	Tracer *tracing.Tracer
	// Now is the clock, for not_before, failure times and the end-to-end
	// latency of handled deliveries (metrics.NameEndToEnd). Defaults to
	// time.Now.
	Now func() time.Time
	// Rand returns the backoff jitter factor u, uniform in [0,1).
	// Defaults to math/rand/v2's Float64.
	Rand func() float64
}

// DefaultWorkers is Config.Workers's default on a database of dialect d.
func DefaultWorkers(d sqldb.Dialect) int {
	if d == sqldb.SQLite {
		return 1
	}
	return 8
}

func (c *Config) setDefaults() {
	if c.Group == "" {
		c.Group = "default"
	}
	if c.Workers == 0 {
		c.Workers = DefaultWorkers(c.Dialect)
	}
	if c.FetchSize == 0 {
		c.FetchSize = 64
	}
	if c.HandlerTimeout == 0 {
		c.HandlerTimeout = 30 * time.Second
	}
	if c.InfraRetryDelay == 0 {
		c.InfraRetryDelay = time.Second
	}
	if c.CleanupInterval == 0 {
		c.CleanupInterval = time.Hour
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Rand == nil {
		c.Rand = rand.Float64
	}
}

// Validate reports every missing or invalid field at once.
func (c *Config) Validate() error {
	var errs []error
	if c.DB == nil {
		errs = append(errs, errors.New("consumer: Config.DB is required"))
	}
	if err := c.Dialect.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("consumer: Config.Dialect: %w", err))
	}
	if c.Subscriber == nil {
		errs = append(errs, errors.New("consumer: Config.Subscriber is required (a transport such as sqlitequeue.Transport)"))
	}
	if c.Workers < 1 {
		errs = append(errs, fmt.Errorf("consumer: Workers %d must be at least 1", c.Workers))
	}
	if c.FetchSize < 1 {
		errs = append(errs, fmt.Errorf("consumer: FetchSize %d must be at least 1", c.FetchSize))
	}
	if c.HandlerTimeout < 0 {
		errs = append(errs, fmt.Errorf("consumer: HandlerTimeout %v is negative", c.HandlerTimeout))
	}
	return errors.Join(errs...)
}

func (c *Config) dedupConfig() dedup.Config {
	return dedup.Config{DB: c.DB, Dialect: c.Dialect, Table: c.DedupTable, Retention: c.DedupRetention}
}
