package outbox

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/msgcontract/msgcontract/runtime-go/envelope"
	"github.com/msgcontract/msgcontract/runtime-go/envelopepb"
	"github.com/msgcontract/msgcontract/runtime-go/event"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb"
	"github.com/msgcontract/msgcontract/runtime-go/tracing"
	"github.com/msgcontract/msgcontract/runtime-go/transport"
)

// RelayConfig configures a Relay. DB, Dialect and Publisher are required.
type RelayConfig struct {
	// DB is the business database holding the outbox.
	DB *sql.DB
	// Dialect of DB.
	Dialect sqldb.Dialect
	// Publisher receives the stored envelopes.
	Publisher transport.Publisher
	// BatchSize is how many pending rows one pass reads. Defaults to 100.
	BatchSize int
	// PollInterval is the longest pause after a pass that found nothing
	// to do: Notify (a producer in this process committed) and, on
	// PostgreSQL, a NOTIFY on the outbox's channel (a producer in another
	// process committed and called Notifier.Notify) end it at once, so
	// PollInterval only bounds how late a row is seen when no signal
	// arrives. Defaults to 100 ms.
	PollInterval time.Duration
	// Lease is how long a relay holds the outbox's single leader lock
	// without renewing it; of several relays on one database only the
	// holder publishes, which keeps per-key order. Defaults to 15 s.
	Lease time.Duration
	// SentRetention is how long sent rows are kept before deletion.
	// Defaults to 24 h.
	SentRetention time.Duration
	// Tracer, when set, wraps each publish in a producer span that
	// continues the trace the producer wrote into the envelope and is
	// injected in its place (package tracing); nil traces nothing.
	Tracer *tracing.Tracer
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// Now defaults to time.Now.
	Now func() time.Time
}

func (c *RelayConfig) setDefaults() {
	if c.BatchSize == 0 {
		c.BatchSize = 100
	}
	if c.PollInterval == 0 {
		c.PollInterval = 100 * time.Millisecond
	}
	if c.Lease == 0 {
		c.Lease = 15 * time.Second
	}
	if c.SentRetention == 0 {
		c.SentRetention = 24 * time.Hour
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Now == nil {
		c.Now = time.Now
	}
}

// Validate reports every missing or invalid field at once.
func (c *RelayConfig) Validate() error {
	var errs []error
	if c.DB == nil {
		errs = append(errs, errors.New("outbox: RelayConfig.DB is required"))
	}
	if err := c.Dialect.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("outbox: RelayConfig.Dialect: %w", err))
	}
	if c.Publisher == nil {
		errs = append(errs, errors.New("outbox: RelayConfig.Publisher is required"))
	}
	if c.BatchSize < 1 {
		errs = append(errs, fmt.Errorf("outbox: BatchSize %d must be at least 1", c.BatchSize))
	}
	return errors.Join(errs...)
}

// Relay publishes outbox rows. All its state is in the database, so a
// restarted relay continues where the last one stopped.
type Relay struct {
	cfg   RelayConfig
	owner string
	// wake holds one pending Notify.
	wake chan struct{}
}

// NewRelay validates cfg and returns a Relay.
func NewRelay(cfg RelayConfig) (*Relay, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Relay{cfg: cfg, owner: event.NewMessageID(), wake: make(chan struct{}, 1)}, nil
}

// Notify tells the relay that a transaction which wrote to the outbox has
// committed, so a waiting Run makes its next pass now instead of after
// PollInterval. Call it after Commit, never before: a pass that runs
// before the commit does not see the row. It never blocks; notifications
// that arrive during a pass fold into one more pass.
func (r *Relay) Notify() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// Run publishes pending rows until ctx ends, then returns nil.
func (r *Relay) Run(ctx context.Context) error {
	if r.cfg.Dialect == sqldb.Postgres {
		stop := r.listen(ctx)
		defer stop()
	}
	lastCleanup := time.Time{}
	for ctx.Err() == nil {
		n, err := r.Flush(ctx)
		if err != nil && ctx.Err() == nil {
			r.cfg.Logger.Error("msgcontract: outbox relay pass failed", "error", err)
		}
		if now := r.cfg.Now(); now.Sub(lastCleanup) > time.Hour {
			lastCleanup = now
			if _, err := r.cfg.DB.ExecContext(ctx, `DELETE FROM `+Table+` WHERE sent_at > 0 AND sent_at < $1`,
				now.Add(-r.cfg.SentRetention).UnixMilli()); err != nil && ctx.Err() == nil {
				r.cfg.Logger.Error("msgcontract: outbox cleanup failed", "error", err)
			}
		}
		if n < r.cfg.BatchSize || err != nil {
			t := time.NewTimer(r.cfg.PollInterval)
			select {
			case <-ctx.Done():
			case <-t.C:
			case <-r.wake:
			}
			t.Stop()
		}
	}
	return nil
}

type row struct {
	id         int64
	topic, key string
	body       []byte
}

// Flush makes one pass: if this relay holds (or takes) the leader lock, it
// publishes up to BatchSize pending rows in id order and marks them sent
// in one statement. A Publisher with a PublishBatch method (the Kafka and
// SQLite queue transports) gets each run of consecutive rows of one topic
// in one call; when that fails, the run is published row by row. After a
// failed publish, later rows of the same biz_key wait for the next pass,
// so per-key order holds. It returns how many rows it published.
func (r *Relay) Flush(ctx context.Context) (int, error) {
	leader, err := r.lead(ctx)
	if err != nil || !leader {
		return 0, err
	}
	rows, err := r.cfg.DB.QueryContext(ctx, `SELECT id, topic, biz_key, envelope FROM `+Table+
		` WHERE sent_at = 0 ORDER BY id LIMIT $1`, r.cfg.BatchSize)
	if err != nil {
		return 0, fmt.Errorf("outbox: read pending: %w", err)
	}
	var batch []row
	for rows.Next() {
		var x row
		if err := rows.Scan(&x.id, &x.topic, &x.key, &x.body); err != nil {
			rows.Close()
			return 0, fmt.Errorf("outbox: read pending: %w", err)
		}
		batch = append(batch, x)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("outbox: read pending: %w", err)
	}
	p := pass{r: r, blocked: map[string]bool{}}
	bp, batched := r.cfg.Publisher.(batchPublisher)
	for i := 0; i < len(batch); {
		j := i + 1
		for j < len(batch) && batch[j].topic == batch[i].topic {
			j++
		}
		if !batched || !p.publishRun(ctx, bp, batch[i:j]) {
			for _, x := range batch[i:j] {
				p.publishOne(ctx, x)
			}
		}
		i = j
	}
	if err := r.markSent(ctx, p.sent); err != nil {
		return 0, err
	}
	return len(p.sent), errors.Join(p.errs...)
}

// batchPublisher is a Publisher that publishes several envelopes to one
// topic in one call, and fails every later envelope of a biz_key after one
// of that key failed (one Kafka partition per key with the idempotent
// producer; one SQLite transaction).
type batchPublisher interface {
	PublishBatch(ctx context.Context, topic string, envs []*envelopepb.Envelope) error
}

// pass is one Flush's progress: the rows published, the keys held back.
type pass struct {
	r       *Relay
	sent    []int64
	blocked map[string]bool
	errs    []error
}

// publishRun publishes rows (one topic) in one call and reports whether
// it did; false leaves them to publishOne.
func (p *pass) publishRun(ctx context.Context, bp batchPublisher, rows []row) bool {
	if len(rows) < 2 {
		return false
	}
	envs := make([]*envelopepb.Envelope, len(rows))
	for i, x := range rows {
		env, err := envelope.Unmarshal(x.body)
		if err != nil {
			return false
		}
		envs[i] = env
	}
	spans := make([]trace.Span, 0, len(envs))
	if p.r.cfg.Tracer != nil {
		for _, env := range envs {
			_, span := p.r.cfg.Tracer.StartPublish(ctx, rows[0].topic, env)
			spans = append(spans, span)
		}
	}
	err := bp.PublishBatch(ctx, rows[0].topic, envs)
	for _, span := range spans {
		tracing.Finish(span, err)
	}
	if err != nil {
		p.r.cfg.Logger.Warn("msgcontract: outbox relay batch publish failed; publishing its rows one by one",
			"topic", rows[0].topic, "rows", len(rows), "error", err)
		return false
	}
	for _, x := range rows {
		p.sent = append(p.sent, x.id)
	}
	return true
}

// publishOne publishes one row unless its key is held back.
func (p *pass) publishOne(ctx context.Context, x row) {
	if p.blocked[x.key] {
		return
	}
	env, err := envelope.Unmarshal(x.body)
	if err == nil {
		err = p.r.publish(ctx, x.topic, env)
	}
	if err != nil {
		p.blocked[x.key] = true
		p.errs = append(p.errs, fmt.Errorf("outbox: publish row %d (biz_key %q): %w", x.id, x.key, err))
		return
	}
	p.sent = append(p.sent, x.id)
}

// markSent marks the rows sent, in one statement per markChunk rows. Rows
// published but not marked (the relay died in between) are published
// again by the next pass: consumers deduplicate them.
func (r *Relay) markSent(ctx context.Context, ids []int64) error {
	for len(ids) > 0 {
		n := min(len(ids), markChunk)
		args := make([]any, 0, n+1)
		args = append(args, r.cfg.Now().UnixMilli())
		marks := make([]string, n)
		for i, id := range ids[:n] {
			args = append(args, id)
			marks[i] = "$" + strconv.Itoa(i+2)
		}
		if _, err := r.cfg.DB.ExecContext(ctx, `UPDATE `+Table+` SET sent_at = $1 WHERE id IN (`+
			strings.Join(marks, ", ")+`)`, args...); err != nil {
			return fmt.Errorf("outbox: mark %d rows sent: %w", n, err)
		}
		ids = ids[n:]
	}
	return nil
}

// markChunk bounds one UPDATE's parameters.
const markChunk = 500

// publish publishes env, in a producer span when the relay traces.
func (r *Relay) publish(ctx context.Context, topic string, env *envelopepb.Envelope) error {
	if r.cfg.Tracer == nil {
		return r.cfg.Publisher.Publish(ctx, topic, env)
	}
	ctx, span := r.cfg.Tracer.StartPublish(ctx, topic, env)
	err := r.cfg.Publisher.Publish(ctx, topic, env)
	tracing.Finish(span, err)
	return err
}

// lead takes or renews the leader lock.
func (r *Relay) lead(ctx context.Context) (bool, error) {
	now := r.cfg.Now()
	res, err := r.cfg.DB.ExecContext(ctx, `UPDATE `+lockTable+` SET owner = $1, lease_until = $2
		WHERE name = 'relay' AND (owner = $1 OR lease_until < $3)`,
		r.owner, now.Add(r.cfg.Lease).UnixMilli(), now.UnixMilli())
	if err != nil {
		return false, fmt.Errorf("outbox: leader lock (did you run outbox.Migrate?): %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil || n == 1 || r.cfg.Dialect != sqldb.MySQL {
		return n == 1, err
	}
	// MySQL counts changed rows, not matched ones: a renewal within the
	// same millisecond changes nothing.
	var owner string
	err = r.cfg.DB.QueryRowContext(ctx, `SELECT owner FROM `+lockTable+` WHERE name = 'relay'`).Scan(&owner)
	return err == nil && owner == r.owner, err
}

// Pending counts rows not yet sent.
func Pending(ctx context.Context, db *sql.DB) (int, error) {
	var n int
	err := db.QueryRowContext(ctx, `SELECT count(*) FROM `+Table+` WHERE sent_at = 0`).Scan(&n)
	return n, err
}

func nowMs() int64 { return time.Now().UnixMilli() }
