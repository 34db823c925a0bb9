package consumer_test

import (
	"context"
	"database/sql"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/msgcontract/msgcontract/runtime-go/classify"
	"github.com/msgcontract/msgcontract/runtime-go/consumer"
	"github.com/msgcontract/msgcontract/runtime-go/envelope"
	"github.com/msgcontract/msgcontract/runtime-go/envelopepb"
	"github.com/msgcontract/msgcontract/runtime-go/transport"
	"github.com/msgcontract/msgcontract/runtime-go/transport/natsjs"
)

// forkingSubscriber wraps a transport.ForkingRetry transport so that the
// first Retry of every stored copy acts out a crash between the retry
// publish and the settle: the copy is published (to the event topic, where
// the consumer takes it as it takes a retry) and the delivery is left
// unsettled, so the transport delivers it again after its lease, and its
// next failure publishes a second copy of the same attempt.
type forkingSubscriber struct {
	inner transport.Subscriber
	raw   func(ctx context.Context, topic string, body []byte) error
	forks atomic.Int64
	mu    sync.Mutex
	seen  map[string]bool // delivery ids whose Retry crashed once
}

func (f *forkingSubscriber) Subscribe(ctx context.Context, group string, topics []string) (transport.Subscription, error) {
	sub, err := f.inner.Subscribe(ctx, group, topics)
	if err != nil {
		return nil, err
	}
	return &forkingSubscription{Subscription: sub, ext: sub.(transport.Extender), f: f}, nil
}

type forkingSubscription struct {
	transport.Subscription
	ext transport.Extender
	f   *forkingSubscriber
}

func (s *forkingSubscription) RetryMayFork()        {}
func (s *forkingSubscription) Lease() time.Duration { return s.ext.Lease() }
func (s *forkingSubscription) Extend(ctx context.Context, ds ...*transport.Delivery) error {
	return s.ext.Extend(ctx, ds...)
}

func (s *forkingSubscription) Retry(ctx context.Context, d *transport.Delivery, env *envelopepb.Envelope) error {
	s.f.mu.Lock()
	crash := !s.f.seen[d.ID]
	s.f.seen[d.ID] = true
	s.f.mu.Unlock()
	if !crash {
		return s.Subscription.Retry(ctx, d, env)
	}
	body, err := envelope.Marshal(env)
	if err != nil {
		return err
	}
	if err := s.f.raw(ctx, topic, body); err != nil {
		return err
	}
	s.f.forks.Add(1)
	return nil // "crashed": d stays unsettled and comes back after the lease
}

// forkingNATS is JetStream with a short lease, its retries forked.
func forkingNATS(t *testing.T, now func() time.Time) (*broker, *forkingSubscriber) {
	nc := startNATS(t)
	tr, err := natsjs.New(context.Background(), natsjs.Config{Conn: nc, Now: now, FetchWait: 100 * time.Millisecond,
		AckWait: 1500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	fs := &forkingSubscriber{inner: tr, raw: tr.PublishRaw, seen: map[string]bool{}}
	drained := func() bool {
		n, err := tr.Backlog(context.Background(), "g")
		return err == nil && n == 0
	}
	return &broker{pub: tr, sub: fs, raw: tr.PublishRaw, dlq: tr, drained: drained, name: "natsjs-forking"}, fs
}

// TestRetryChainFork: every retry of every message forks (a crash between
// publish and settle), and still each message is dead-lettered once, as
// the copy that went on; the other copies are dropped as superseded.
// Without the chain, each level doubled the copies: 2^3 dead letters for
// a message with three retries.
func TestRetryChainFork(t *testing.T) {
	t.Parallel()
	for _, batch := range []bool{false, true} {
		name := "per-message"
		if batch {
			name = "batch"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			testRetryChainFork(t, batch, func(t *testing.T, now func() time.Time) (*broker, *forkingSubscriber) {
				return forkingNATS(t, now)
			})
		})
	}
	for _, open := range kafkaForkingBrokers() {
		t.Run("kafka", func(t *testing.T) {
			t.Parallel()
			testRetryChainFork(t, true, open)
		})
	}
	for _, open := range rabbitmqForkingBrokers() {
		t.Run("rabbitmq", func(t *testing.T) {
			t.Parallel()
			testRetryChainFork(t, true, open)
		})
	}
}

func testRetryChainFork(t *testing.T, batch bool,
	open func(t *testing.T, now func() time.Time) (*broker, *forkingSubscriber)) {
	p := fastPolicy
	p.MaxRetries = 3
	p.JitterMs = 0
	f := newFixture(t, sqliteBackend, sqliteBroker, p)
	br, fs := open(t, f.now)
	f.br = br
	f.start(func(ctx context.Context, tx *sql.Tx, m *wrapperspb.StringValue) error {
		if err := insertEffect(ctx, tx, "doomed"); err != nil {
			return err
		}
		return classify.NewError(codeSystem, "downstream always fails")
	}, func(c *consumer.Config) {
		c.HandlerTimeout = time.Second
		if batch {
			c.PerMessageTx, c.FetchSize = false, 16
		}
	})
	const messages = 4
	ids := map[string]bool{}
	for i := range messages {
		env := f.envelope("order:"+string(rune('a'+i)), "pay")
		ids[env.GetMessageId()] = true
		f.publish(env)
	}
	waitFor(t, "every message dead-lettered", func() bool { return f.count(f.m.DeadLettered) >= messages })
	f.drain()
	time.Sleep(2 * time.Second) // a late superseded copy would dead-letter now
	f.drain()
	recs := f.deadLetters()
	per := map[string]int{}
	for _, r := range recs {
		per[r.MessageID]++
	}
	for id := range ids {
		if per[id] != 1 {
			t.Errorf("message %s dead-lettered %d times, want once", id, per[id])
		}
	}
	if len(recs) != messages {
		t.Errorf("dead letters = %d, want %d (one per message)", len(recs), messages)
	}
	if n := fs.forks.Load(); n < messages {
		t.Errorf("forks injected = %d, want at least %d: the test did not fork", n, messages)
	}
	if got := f.count(f.m.Deduped); got < messages {
		t.Errorf("superseded copies dropped = %d, want at least %d (one per forked level)", got, messages)
	}
	if got := f.effects(); got != 0 {
		t.Errorf("effects = %d, want 0", got)
	}
	t.Logf("forks injected %d, superseded %d, dead letters %d, handler runs %d",
		fs.forks.Load(), f.count(f.m.Deduped), len(recs), f.calls.Load())
}
