// Package benchmsg is what the bench programs share: the event spec, the
// business table, and the processed-counter readout.
package benchmsg

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/msgcontract/msgcontract/runtime-go/backoff"
	"github.com/msgcontract/msgcontract/runtime-go/classify"
	"github.com/msgcontract/msgcontract/runtime-go/consumer"
	"github.com/msgcontract/msgcontract/runtime-go/dedup"
	"github.com/msgcontract/msgcontract/runtime-go/envelope"
	"github.com/msgcontract/msgcontract/runtime-go/event"
	"github.com/msgcontract/msgcontract/runtime-go/metrics"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb/sqlitedb"
)

// Handler and event names.
const (
	Handler   = "bench-handler"
	EventType = "BENCH"
	Topic     = "bench"
)

// Codes of the bench contract.
const (
	CodeBusiness int32 = 40001
	CodeSystem   int32 = 50001
)

// Spec is the bench event: short backoff so retries finish quickly.
var Spec = &event.Spec{
	FullName: "google.protobuf.StringValue", Topic: Topic, EventType: EventType, Subject: "bench.v1", SchemaVersion: 1,
	Policy: backoff.Policy{BaseMs: 50, Multiplier: 2, JitterMs: 50, MaxDelayMs: 1000, MaxRetries: 4},
	Rules: classify.Rules{Ranges: []classify.Range{
		{From: 40000, To: 49999, Retryable: false, Name: "business"},
		{From: 50000, To: 59999, Retryable: true, Name: "system"},
	}, UnclassifiedRetryable: true},
}

// CreateEffects creates the business table: deliberately without a unique
// key, so a duplicate effect would show.
func CreateEffects(ctx context.Context, db *sql.DB) error {
	_, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS effects (biz_key TEXT NOT NULL, note TEXT NOT NULL)`)
	return err
}

// OpenEffects opens (creating) the SQLite file at path with the effects
// table in it: the business database of a bench side.
func OpenEffects(ctx context.Context, path string) (*sql.DB, error) {
	db, err := sqlitedb.Open(path)
	if err != nil {
		return nil, err
	}
	if err := CreateEffects(ctx, db); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// InsertEffect is the business write.
func InsertEffect(ctx context.Context, tx *sql.Tx, note string) error {
	env, _ := consumer.EnvelopeFrom(ctx)
	_, err := tx.ExecContext(ctx, `INSERT INTO effects (biz_key, note) VALUES ($1, $2)`, env.GetBizKey(), note)
	return err
}

// Processed reads msgcontract_messages_processed_total{outcome="handled"}
// for the bench handler.
func Processed(m *metrics.Prometheus) int {
	return int(testutil.ToFloat64(m.Processed.WithLabelValues(Handler, EventType)))
}

// CreateDedup creates the runtime's dedup tables (msg_dedup and its
// index) in db of dialect d, for a bare loop that writes dedup rows itself.
func CreateDedup(ctx context.Context, db *sql.DB, d sqldb.Dialect) error {
	store, err := dedup.New(dedup.Config{DB: db, Dialect: d})
	if err != nil {
		return err
	}
	return store.Migrate(ctx)
}

// bareClaim is the dedup row's INSERT of a bare loop, by dialect: the
// row is kept when the key exists (ON CONFLICT DO NOTHING, on MySQL its
// no-op ON DUPLICATE KEY UPDATE), which affects no row.
var bareClaim = map[sqldb.Dialect]string{}

func init() {
	for _, d := range []sqldb.Dialect{sqldb.SQLite, sqldb.Postgres, sqldb.MySQL} {
		bareClaim[d] = `INSERT INTO msg_dedup (biz_key, handler, message_id, payload_hash, created_at)
			VALUES ($1, $2, $3, $4, $5)` + d.OnConflictDoNothing("biz_key, handler")
	}
}

// BareHandle is a bare loop's work on one message inside its transaction
// on a database of dialect d: decode the envelope and payload, with
// withDedup insert the dedup row (kept when the key exists; a duplicate
// stops there), then the business INSERT.
func BareHandle(ctx context.Context, tx *sql.Tx, d sqldb.Dialect, body []byte, withDedup bool) error {
	env, err := envelope.Unmarshal(body)
	if err != nil {
		return err
	}
	var payload wrapperspb.StringValue
	if err := envelope.DecodePayload(env, &payload); err != nil {
		return err
	}
	if withDedup {
		h := sha256.Sum256(env.GetPayload())
		res, err := tx.ExecContext(ctx, bareClaim[d],
			env.GetBizKey(), Handler, env.GetMessageId(), hex.EncodeToString(h[:]), time.Now().UnixMilli())
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return err
		}
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO effects (biz_key, note) VALUES ($1, $2)`, env.GetBizKey(), "bare")
	return err
}
