package outbox

import (
	"context"
	"database/sql"
	"errors"

	"google.golang.org/protobuf/proto"

	"github.com/msgcontract/msgcontract/runtime-go/envelopepb"
	"github.com/msgcontract/msgcontract/runtime-go/transport"
)

// ErrNoTx is returned by Publisher.Publish when the context carries no
// business transaction. Writing in a transaction of its own would publish
// a message whose business change may never commit: the atomicity the
// outbox exists for would be gone without a sound.
var ErrNoTx = errors.New("outbox: Publish needs the business transaction in its context: " +
	"ctx = outbox.WithTx(ctx, tx), then commit tx; to publish outside a transaction use a transport directly")

// Publisher is a transport.Publisher that writes to the outbox, so code
// written against transport.Publisher (generated producers included) can
// publish through it. The business transaction travels in the context
// (WithTx) and the envelope joins it; without one Publish fails with
// ErrNoTx. The zero value is ready to use.
type Publisher struct{}

var _ transport.Publisher = Publisher{}

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

// Publish writes env to the outbox for topic (which becomes env.topic) in
// the context's transaction, and fails with ErrNoTx when there is none.
func (Publisher) Publish(ctx context.Context, topic string, env *envelopepb.Envelope) error {
	tx, ok := TxFrom(ctx)
	if !ok {
		return ErrNoTx
	}
	if topic != "" && env.GetTopic() != topic {
		env = proto.Clone(env).(*envelopepb.Envelope)
		env.Topic = topic
	}
	return Write(ctx, tx, env)
}
