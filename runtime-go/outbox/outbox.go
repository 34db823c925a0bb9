// Package outbox is the producer's transactional outbox: Write stores an
// envelope in the business transaction, so the message exists exactly when
// the business change commits, and a Relay publishes stored envelopes to a
// transport afterwards.
//
// Delivery is at least once (a relay that dies between publishing and
// marking a row sent publishes it again); the consumer's dedup makes it
// effectively once. Rows of one biz_key are published in the order they
// were written.
package outbox

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/msgcontract/msgcontract/runtime-go/envelope"
	"github.com/msgcontract/msgcontract/runtime-go/envelopepb"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb/ddl"
	"github.com/msgcontract/msgcontract/runtime-go/tracing"
)

// Table is the outbox table's name.
const Table = "msg_outbox"

const lockTable = "msg_outbox_lock"

// Write stores env in the outbox within tx, the business transaction. The
// envelope's topic (env.topic, set by event.NewEnvelope) is where the relay
// publishes it. The table must exist: see Migrate. An envelope without
// trace context gets ctx's span context (tracing.Inject), so consumers
// continue the producer's trace; without a span in ctx nothing changes.
func Write(ctx context.Context, tx *sql.Tx, env *envelopepb.Envelope) error {
	if env.GetTopic() == "" {
		return fmt.Errorf("outbox: envelope %s has no topic; build it with event.NewEnvelope", env.GetMessageId())
	}
	if env.GetTrace().GetTraceparent() == "" {
		tracing.Inject(ctx, env)
	}
	body, err := envelope.Marshal(env)
	if err != nil {
		return fmt.Errorf("outbox: %w", err)
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO `+Table+` (topic, biz_key, message_id, envelope, created_at)
		VALUES ($1, $2, $3, $4, $5)`, env.GetTopic(), env.GetBizKey(), env.GetMessageId(), body, nowMs())
	if err != nil {
		return fmt.Errorf("outbox: write (did you run outbox.Migrate?): %w", err)
	}
	return nil
}

// Migrate creates the outbox tables in db if they do not exist, by the
// statements of contracts/sql (sqldb/ddl).
func Migrate(ctx context.Context, db *sql.DB, d sqldb.Dialect) error {
	if err := d.Validate(); err != nil {
		return err
	}
	stmts, err := ddl.Statements(d, nil, Table, lockTable)
	if err == nil {
		err = sqldb.Migrate(ctx, db, d, stmts...)
	}
	if err != nil {
		return fmt.Errorf("outbox: migrate: %w", err)
	}
	return nil
}
