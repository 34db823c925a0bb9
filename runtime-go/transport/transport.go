// Package transport is the small interface between the consumer loop and a
// message broker. A transport moves encoded envelopes; it never decodes
// payloads, never deduplicates and never decides about retries: those are
// the consumer's, so every transport behaves the same.
//
// Implementations: transport/sqlitequeue (embedded, the default),
// transport/natsjs (NATS JetStream) and transport/kafka (Apache Kafka). A
// Delivery carries its partition and offset for partitioned logs, and a
// Subscription may serialise deliveries of one key (kafka does).
package transport

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/msgcontract/msgcontract/runtime-go/dlq"
	"github.com/msgcontract/msgcontract/runtime-go/envelopepb"
)

// Publisher publishes an envelope to a topic. Every transport and the
// outbox relay satisfy it; generated producers call it.
type Publisher interface {
	Publish(ctx context.Context, topic string, env *envelopepb.Envelope) error
}

// Subscriber opens subscriptions. A group is a named set of consumers that
// share the work: each message published to a topic is delivered to one
// member of every group subscribed to it.
type Subscriber interface {
	Subscribe(ctx context.Context, group string, topics []string) (Subscription, error)
}

// Delivery is one delivery of one message.
type Delivery struct {
	// ID is the transport's message id: fresh for every publish, including
	// retries, so broker-level dedup never drops a retry.
	ID string
	// Topic the message was delivered from (for a retry, its original
	// topic).
	Topic string
	// Body is the encoded envelope, exactly as published.
	Body []byte
	// Attempt counts transport deliveries of this publish, 1 on the first.
	Attempt int
	// Partition and Offset locate the message in partitioned logs; zero
	// elsewhere.
	Partition int32
	Offset    int64
	// Handle is the transport's own state; consumers leave it alone.
	Handle any
}

// Subscription delivers messages of one group. Every method that settles a
// delivery (Ack, Defer, Retry, DeadLetter) settles it exactly once; a
// delivery left unsettled is redelivered after the transport's lease or ack
// deadline expires.
type Subscription interface {
	// Fetch blocks until at least one delivery is ready or ctx ends, and
	// returns at most max deliveries. It returns ctx.Err() when ctx ends.
	Fetch(ctx context.Context, max int) ([]*Delivery, error)
	// Ack settles deliveries as done.
	Ack(ctx context.Context, ds ...*Delivery) error
	// Defer hands d back unacknowledged, to be delivered again not before
	// until.
	Defer(ctx context.Context, d *Delivery, until time.Time) error
	// Retry publishes env (the retry copy of d's message) to this group's
	// retry destination under a fresh transport id, not to be delivered
	// before env.not_before, and acknowledges d.
	Retry(ctx context.Context, d *Delivery, env *envelopepb.Envelope) error
	// DeadLetter stores rec in the dead-letter destination and
	// acknowledges d.
	DeadLetter(ctx context.Context, d *Delivery, rec *dlq.Record) error
	// Close releases the subscription; unsettled deliveries are
	// redelivered.
	Close() error
}

// ErrClosed is returned by operations on a closed transport or
// subscription.
var ErrClosed = errors.New("transport: closed")

// Extender is implemented by subscriptions whose deliveries are leased.
// The consumer extends the leases of deliveries it is still working on, so
// a slow handler does not see its message redelivered to someone else.
type Extender interface {
	// Lease is how long a delivery stays invisible after Fetch or Extend.
	Lease() time.Duration
	// Extend renews the leases of ds for another Lease.
	Extend(ctx context.Context, ds ...*Delivery) error
}

// TxAcker is implemented by subscriptions whose queue lives in a SQL
// database. When that database is the consumer's business database, the
// consumer acknowledges inside the business transaction, so the effect, the
// claim and the acknowledgement commit together: no separate write, no
// redelivery after a crash between commit and ack.
type TxAcker interface {
	// AckDB is the database the acknowledgements are written to.
	AckDB() *sql.DB
	// AckTx acknowledges ds inside tx, a transaction on AckDB. Deliveries
	// whose lease was lost are left to their new holder.
	AckTx(ctx context.Context, tx *sql.Tx, ds ...*Delivery) error
}

// TxFetcher is implemented by subscriptions whose queue lives in a SQL
// database and that can hand out deliveries inside the caller's
// transaction. When that database is the consumer's business database,
// the consumer reads a fetch, runs its claims and handlers and deletes the
// rows in one transaction: no lease is written in the common case, and the
// transaction's write lock keeps every other consumer off the rows.
type TxFetcher interface {
	TxAcker
	// Ready blocks until a delivery may be ready. It returns ctx.Err()
	// when ctx ends and ErrClosed when the subscription closes.
	Ready(ctx context.Context) error
	// FetchTx reads up to max ready deliveries inside tx, a transaction on
	// AckDB that holds the database's write lock, without waiting and
	// without leasing them: they are tx's. AckTx in tx settles them; to
	// settle them any other way, LeaseTx them and commit tx first. If tx
	// rolls back they are as they were.
	FetchTx(ctx context.Context, tx *sql.Tx, max int) ([]*Delivery, error)
	// LeaseTx leases ds, read by FetchTx in tx, inside tx: once tx
	// commits they are held as Fetch would hold them (Extender, Ack,
	// Defer, Retry, DeadLetter).
	LeaseTx(ctx context.Context, tx *sql.Tx, ds ...*Delivery) error
}

// ForkingRetry is implemented by subscriptions whose Retry and DeadLetter
// publish first and settle the delivery in a second step (Kafka, NATS
// JetStream). A crash or a rebalance between the two delivers the copy
// again, and its next failure publishes a second retry copy of the same
// attempt: the message's retry chain forks. The consumer then keeps each
// message to one chain in the business database (dedup.Store.Advance),
// using Delivery.ID, which must name the stored copy and stay the same on
// its redeliveries.
type ForkingRetry interface {
	RetryMayFork()
}

// Backlog is implemented by transports that can tell how many messages of a
// group are not yet acknowledged (waiting, leased or in flight). Zero means
// the group is drained. Tests and operators use it; the consumer does not.
type Backlog interface {
	Backlog(ctx context.Context, group string) (int, error)
}
