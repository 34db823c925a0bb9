package outbox

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/codes"

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
	// PollInterval is the pause after a pass that found nothing to do.
	// Defaults to 100 ms.
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
}

// NewRelay validates cfg and returns a Relay.
func NewRelay(cfg RelayConfig) (*Relay, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Relay{cfg: cfg, owner: event.NewMessageID()}, nil
}

// Run publishes pending rows until ctx ends, then returns nil.
func (r *Relay) Run(ctx context.Context) error {
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
// publishes up to BatchSize pending rows in id order and marks each sent.
// After a failed publish, later rows of the same biz_key wait for the next
// pass, so per-key order holds. It returns how many rows it published.
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
	blocked := map[string]bool{}
	sent := 0
	var errs []error
	for _, x := range batch {
		if blocked[x.key] {
			continue
		}
		env, err := envelope.Unmarshal(x.body)
		if err == nil {
			err = r.publish(ctx, x.topic, env)
		}
		if err != nil {
			blocked[x.key] = true
			errs = append(errs, fmt.Errorf("outbox: publish row %d (biz_key %q): %w", x.id, x.key, err))
			continue
		}
		if _, err := r.cfg.DB.ExecContext(ctx, `UPDATE `+Table+` SET sent_at = $1 WHERE id = $2`,
			r.cfg.Now().UnixMilli(), x.id); err != nil {
			return sent, fmt.Errorf("outbox: mark row %d sent: %w", x.id, err)
		}
		sent++
	}
	return sent, errors.Join(errs...)
}

// lead takes or renews the leader lock.
// publish publishes env, in a producer span when the relay traces.
func (r *Relay) publish(ctx context.Context, topic string, env *envelopepb.Envelope) error {
	if r.cfg.Tracer == nil {
		return r.cfg.Publisher.Publish(ctx, topic, env)
	}
	ctx, span := r.cfg.Tracer.StartPublish(ctx, topic, env)
	defer span.End()
	err := r.cfg.Publisher.Publish(ctx, topic, env)
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	return err
}

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
