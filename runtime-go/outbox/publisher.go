package outbox

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"google.golang.org/protobuf/proto"

	"github.com/msgcontract/msgcontract/runtime-go/envelopepb"
	"github.com/msgcontract/msgcontract/runtime-go/transport"
)

// Publisher is a transport.Publisher that writes to the outbox, so code
// written against transport.Publisher (generated producers included) can
// publish through it. Inside a business transaction, put the transaction
// in the context with WithTx and the envelope joins it; otherwise Publish
// writes in a transaction of its own.
type Publisher struct {
	db *sql.DB
}

var _ transport.Publisher = (*Publisher)(nil)

// NewPublisher returns a Publisher on db, whose outbox tables exist (see
// Migrate).
func NewPublisher(db *sql.DB) (*Publisher, error) {
	if db == nil {
		return nil, errors.New("outbox: NewPublisher needs the business database")
	}
	return &Publisher{db: db}, nil
}

type txKey struct{}

// WithTx returns a context carrying tx, the business transaction that
// Publisher.Publish writes in.
func WithTx(ctx context.Context, tx *sql.Tx) context.Context {
	return context.WithValue(ctx, txKey{}, tx)
}

// TxFrom returns the transaction WithTx put in ctx.
func TxFrom(ctx context.Context) (*sql.Tx, bool) {
	tx, ok := ctx.Value(txKey{}).(*sql.Tx)
	return tx, ok && tx != nil
}

// Publish writes env to the outbox for topic (which becomes env.topic),
// in the context's transaction if it carries one.
func (p *Publisher) Publish(ctx context.Context, topic string, env *envelopepb.Envelope) error {
	if topic != "" && env.GetTopic() != topic {
		env = proto.Clone(env).(*envelopepb.Envelope)
		env.Topic = topic
	}
	if tx, ok := TxFrom(ctx); ok {
		return Write(ctx, tx, env)
	}
	tx, err := p.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("outbox: publish: %w", err)
	}
	defer tx.Rollback()
	if err := Write(ctx, tx, env); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("outbox: publish: %w", err)
	}
	return nil
}
