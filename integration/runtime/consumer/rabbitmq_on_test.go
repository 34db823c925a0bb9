//go:build rabbitmq

package consumer_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/msgcontract/msgcontract/runtime-go/classify"
	"github.com/msgcontract/msgcontract/runtime-go/consumer"
	"github.com/msgcontract/msgcontract/runtime-go/transport"
	"github.com/msgcontract/msgcontract/runtime-go/transport/rabbitmq"
	"github.com/msgcontract/msgcontract/runtime-go/transport/rabbitmq/rabbitmqtest"
)

// rabbitmqMatrix adds RabbitMQ to the fault matrix when built with -tags
// rabbitmq (make test-rabbitmq): a real broker, started by
// scripts/with-rabbitmq.sh.
func rabbitmqMatrix() []matrixEntry {
	return []matrixEntry{
		{sqliteBackend, rabbitmqBroker, false},
		{sqliteBackend, rabbitmqBroker, true},
	}
}

// rabbitmqBroker declares group g's queue up front: the fixtures publish
// before their consumer subscribes. Prefetch covers the fixtures' workers
// (up to 32) times their fetch size.
var rabbitmqBroker = brokerKind{name: "rabbitmq", open: func(t *testing.T, now func() time.Time) *broker {
	tr := rabbitmqtest.New(t, rabbitmq.Config{Now: now, Prefetch: 64, Topology: map[string][]string{topic: {"g"}}})
	drained := func() bool {
		n, err := tr.Backlog(context.Background(), "g")
		return err == nil && n == 0
	}
	return &broker{pub: tr, sub: tr, raw: tr.PublishRaw, dlq: tr, drained: drained, name: "rabbitmq"}
}}

// childRabbitMQEnv carries the fixture's prefix to child processes; the
// broker's URL comes from rabbitmqtest.Env, which they inherit.
const childRabbitMQEnv = "MSGCONTRACT_FAULT_RABBITMQ_PREFIX"

func rabbitmqProcessTransports() []string { return []string{"rabbitmq"} }

// openRabbitMQProcess makes p's transport a RabbitMQ prefix the children
// share, with group g's queue declared before they start. Its backlog
// counts what the queues hold ready: the children's unacknowledged
// deliveries are out of its sight, so the tests wait for their effects
// first.
func openRabbitMQProcess(t *testing.T, p *processFixture) {
	prefix := rabbitmqtest.Prefix()
	p.childEnv = append(p.childEnv, childRabbitMQEnv+"="+prefix)
	tr := rabbitmqtest.New(t, rabbitmq.Config{Prefix: prefix, Topology: map[string][]string{topic: {"g"}}})
	p.pub, p.deadLetters = tr, tr
	p.backlog = func() (int, error) { return tr.Backlog(context.Background(), "g") }
}

// rabbitmqChildTransport is a child's transport when the parent runs
// RabbitMQ.
func rabbitmqChildTransport(ctx context.Context) (transport.Subscriber, bool, error) {
	prefix, ok := os.LookupEnv(childRabbitMQEnv)
	if !ok {
		return nil, false, nil
	}
	tr, err := rabbitmq.New(ctx, rabbitmq.Config{URL: os.Getenv(rabbitmqtest.Env), Prefix: prefix, Lease: childLease, Prefetch: 16})
	return tr, true, err
}

// rabbitmqForkingBrokers: RabbitMQ with a short lease, its retries forked
// (TestRetryChainFork).
func rabbitmqForkingBrokers() []func(*testing.T, func() time.Time) (*broker, *forkingSubscriber) {
	return []func(*testing.T, func() time.Time) (*broker, *forkingSubscriber){
		func(t *testing.T, now func() time.Time) (*broker, *forkingSubscriber) {
			tr := rabbitmqtest.New(t, rabbitmq.Config{Now: now, Prefetch: 64, Lease: 1500 * time.Millisecond,
				Topology: map[string][]string{topic: {"g"}}})
			fs := &forkingSubscriber{inner: tr, raw: tr.PublishRaw, seen: map[string]bool{}}
			drained := func() bool {
				n, err := tr.Backlog(context.Background(), "g")
				return err == nil && n == 0
			}
			return &broker{pub: tr, sub: fs, raw: tr.PublishRaw, dlq: tr, drained: drained, name: "rabbitmq-forking"}, fs
		},
	}
}

// TestRabbitMQThousand: 1,000 messages over RabbitMQ into a SQLite
// business database, 200 of them published twice and 100 of those and 150
// others failing transiently on their first attempt (retried through the
// delay queues), each in per-message and batch mode: every message has
// exactly one effect, none is lost, none dead-lettered.
func TestRabbitMQThousand(t *testing.T) {
	t.Parallel()
	for _, batch := range []bool{false, true} {
		t.Run(fmt.Sprint("batch=", batch), func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, sqliteBackend, rabbitmqBroker, fastPolicy)
			const n = 1000
			flaky := func(i int) bool { return i%4 == 0 } // 250 messages
			for i := range n {
				env := f.envelope(fmt.Sprintf("order:%d", i), fmt.Sprint(i))
				f.publish(env)
				if i%5 == 0 { // 200 duplicates, 50 of them flaky too
					f.publish(env)
				}
			}
			f.start(func(ctx context.Context, tx *sql.Tx, m *wrapperspb.StringValue) error {
				env, _ := consumer.EnvelopeFrom(ctx)
				var i int
				fmt.Sscan(m.GetValue(), &i)
				if flaky(i) && env.GetRetryCount() == 0 {
					return classify.Errorf(codeSystem, "downstream unavailable")
				}
				return insertEffect(ctx, tx, m.GetValue())
			}, func(c *consumer.Config) {
				c.Workers = 8
				if batch {
					c.PerMessageTx, c.FetchSize = false, 16
				}
			})
			waitFor(t, "1,000 effects", func() bool { return f.effects() == n })
			f.drain()
			if got := f.effects(); got != n {
				t.Errorf("effects = %d, want %d", got, n)
			}
			var keys, dup int
			if err := f.db.QueryRow(`SELECT count(DISTINCT biz_key), count(*) - count(DISTINCT biz_key) FROM effects`).Scan(&keys, &dup); err != nil {
				t.Fatal(err)
			}
			if keys != n || dup != 0 {
				t.Errorf("%d keys with an effect, %d duplicate effects; want %d and 0", keys, dup, n)
			}
			var retried int
			if err := f.db.QueryRow(`SELECT count(*) FROM effects WHERE retry_count = 1`).Scan(&retried); err != nil {
				t.Fatal(err)
			}
			if retried != 250 {
				t.Errorf("%d effects after one retry, want 250", retried)
			}
			if recs, err := f.br.dlq.List(context.Background(), dlqAll); err != nil || len(recs) != 0 {
				t.Errorf("dead letters: %d, %v; want none", len(recs), err)
			}
			t.Logf("rabbitmq: %d messages, %d duplicates, 250 retried: processed=%d deduplicated=%d",
				n, n/5, f.count(f.m.Processed), f.count(f.m.Deduped))
		})
	}
}
