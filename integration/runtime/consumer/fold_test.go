package consumer_test

import (
	"context"
	"database/sql"
	"fmt"
	"sync/atomic"
	"testing"

	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/msgcontract/msgcontract/runtime-go/classify"
	"github.com/msgcontract/msgcontract/runtime-go/consumer"
	"github.com/msgcontract/msgcontract/runtime-go/transport"
)

// countingSub counts how a consumer takes its deliveries.
type countingSub struct {
	transport.Subscription
	transport.TxFetcher
	transport.Extender
	fetches, txFetches, leases atomic.Int64
}

func (s *countingSub) Fetch(ctx context.Context, max int) ([]*transport.Delivery, error) {
	s.fetches.Add(1)
	return s.Subscription.Fetch(ctx, max)
}

func (s *countingSub) FetchTx(ctx context.Context, tx *sql.Tx, max int) ([]*transport.Delivery, error) {
	ds, err := s.TxFetcher.FetchTx(ctx, tx, max)
	if len(ds) > 0 {
		s.txFetches.Add(1)
	}
	return ds, err
}

func (s *countingSub) LeaseTx(ctx context.Context, tx *sql.Tx, ds ...*transport.Delivery) error {
	s.leases.Add(1)
	return s.TxFetcher.LeaseTx(ctx, tx, ds...)
}

type countingSubscriber struct {
	transport.Subscriber
	sub *countingSub
}

func (c *countingSubscriber) Subscribe(ctx context.Context, group string, topics []string) (transport.Subscription, error) {
	sub, err := c.Subscriber.Subscribe(ctx, group, topics)
	if err != nil {
		return nil, err
	}
	c.sub.Subscription, c.sub.TxFetcher, c.sub.Extender = sub, sub.(transport.TxFetcher), sub.(transport.Extender)
	return c.sub, nil
}

// In batch mode with the queue in the business database, fetches are read
// in the business transaction (no Fetch, no lease), and a handler failure
// or an undecodable message leases its fetch and goes the ordinary way:
// retried, dead-lettered, every other message once.
func TestFoldedFetch(t *testing.T) {
	t.Parallel()
	f := newFixture(t, sqliteBackend, sharedSQLiteBroker, fastPolicy)
	f.clock = newScaledClock(10)
	cs := &countingSubscriber{Subscriber: f.br.sub, sub: &countingSub{}}
	f.br.sub = cs
	for i := range 40 {
		f.publish(f.envelope(fmt.Sprintf("order:f%d", i), fmt.Sprint(i)))
	}
	if err := f.br.raw(context.Background(), topic, []byte("not an envelope")); err != nil {
		t.Fatal(err)
	}
	f.start(func(ctx context.Context, tx *sql.Tx, m *wrapperspb.StringValue) error {
		env, _ := consumer.EnvelopeFrom(ctx)
		if env.GetRetryCount() == 0 && m.GetValue() == "7" {
			return classify.NewError(codeSystem, "transient")
		}
		return insertEffect(ctx, tx, m.GetValue())
	}, func(c *consumer.Config) { c.PerMessageTx, c.FetchSize, c.Workers = false, 8, 2 })
	waitFor(t, "40 effects and a dead letter", func() bool { return f.effects() == 40 && len(f.deadLetters()) == 1 })
	f.drain()
	if got := f.effects(); got != 40 {
		t.Errorf("effects = %d, want 40", got)
	}
	f.wantCount("processed", f.m.Processed, 40)
	f.wantCount("retried", f.m.Retried, 1)
	s := cs.sub
	if s.fetches.Load() != 0 || s.txFetches.Load() == 0 {
		t.Errorf("Fetch calls = %d, FetchTx with deliveries = %d; want every fetch read in the business transaction",
			s.fetches.Load(), s.txFetches.Load())
	}
	// The fetch with the undecodable row and the one with the failing
	// handler are leased; a lease per fetch would be about 6.
	if got := s.leases.Load(); got < 2 || got >= s.txFetches.Load() {
		t.Errorf("leases = %d of %d fetches, want 2 or 3 (the fetches with a failure)", got, s.txFetches.Load())
	}
}
