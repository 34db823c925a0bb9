//go:build kafka

package consumer_test

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/msgcontract/msgcontract/runtime-go/consumer"
	"github.com/msgcontract/msgcontract/runtime-go/dedup"
	"github.com/msgcontract/msgcontract/runtime-go/envelopepb"
	"github.com/msgcontract/msgcontract/runtime-go/transport"
	"github.com/msgcontract/msgcontract/runtime-go/transport/kafka"
	"github.com/msgcontract/msgcontract/runtime-go/transport/kafka/kafkatest"
)

// childKafkaEnv carries the fixture's namespace to child processes; the
// brokers come from kafkatest.Env.
const childKafkaEnv = "MSGCONTRACT_FAULT_KAFKA_NAMESPACE"

// kafkaMatrix adds Kafka to the fault matrix when built with -tags kafka
// (make test-kafka): a real broker, started by scripts/with-kafka.sh.
func kafkaMatrix() []struct {
	db    dbBackend
	br    brokerKind
	batch bool
} {
	return []struct {
		db    dbBackend
		br    brokerKind
		batch bool
	}{
		{sqliteBackend, kafkaBroker, false},
		{sqliteBackend, kafkaBroker, true},
	}
}

func kafkaProcessTransports() []string { return []string{"kafka"} }

var kafkaBroker = brokerKind{name: "kafka", open: func(t *testing.T, now func() time.Time) *broker {
	tr, err := kafka.New(context.Background(), kafka.Config{Brokers: kafkatest.Brokers(t),
		Namespace: kafkatest.Namespace(), Partitions: 2, Now: now, SessionTimeout: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	drained := func() bool {
		n, err := tr.Backlog(context.Background(), "g", topic)
		return err == nil && n == 0
	}
	return &broker{pub: tr, sub: tr, raw: tr.PublishRaw, dlq: tr, drained: drained, name: "kafka"}
}}

// openKafkaProcess makes p's transport a Kafka namespace the children
// share.
func openKafkaProcess(t *testing.T, p *processFixture) {
	ns := kafkatest.Namespace()
	p.childEnv = append(p.childEnv, childKafkaEnv+"="+ns)
	ctx := context.Background()
	tr, err := kafka.New(ctx, kafka.Config{Brokers: kafkatest.Brokers(t), Namespace: ns, Partitions: 4})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	p.pub, p.deadLetters = tr, tr
	p.backlog = func() (int, error) {
		n, err := tr.Backlog(ctx, "g", topic)
		return int(n), err
	}
}

// kafkaChildTransport is a child's transport when the parent runs Kafka.
func kafkaChildTransport(ctx context.Context) (transport.Subscriber, bool, error) {
	ns, ok := os.LookupEnv(childKafkaEnv)
	if !ok {
		return nil, false, nil
	}
	tr, err := kafka.New(ctx, kafka.Config{Brokers: []string{os.Getenv(kafkatest.Env)}, Namespace: ns,
		Partitions: 4, Lease: childLease, SessionTimeout: 3 * time.Second})
	return tr, true, err
}

// kafkaForkingBrokers: Kafka with a short in-process lease, its retries
// forked (TestRetryChainFork).
func kafkaForkingBrokers() []func(*testing.T, func() time.Time) (*broker, *forkingSubscriber) {
	return []func(*testing.T, func() time.Time) (*broker, *forkingSubscriber){
		func(t *testing.T, now func() time.Time) (*broker, *forkingSubscriber) {
			tr, err := kafka.New(context.Background(), kafka.Config{Brokers: kafkatest.Brokers(t),
				Namespace: kafkatest.Namespace(), Partitions: 2, Now: now, SessionTimeout: 3 * time.Second,
				Lease: 1500 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { tr.Close() })
			fs := &forkingSubscriber{inner: tr, raw: tr.PublishRaw, seen: map[string]bool{}}
			drained := func() bool {
				n, err := tr.Backlog(context.Background(), "g", topic)
				return err == nil && n == 0
			}
			return &broker{pub: tr, sub: fs, raw: tr.PublishRaw, dlq: tr, drained: drained, name: "kafka-forking"}, fs
		},
	}
}

// Several workers on PostgreSQL keep a key's records in offset order (the
// subscription hands a key's next record out only once the one before is
// settled). Each key's copies are published a round apart, so that they
// fall into different workers' fetches, each with a payload of its own:
// the first copy claims the key, and every later one is recorded as a
// conflict with the first as the prior claim. Were two copies of a key in
// flight at once, in two workers' transactions, a later copy would often
// claim the key first.
func TestKafkaKeyOrderAcrossWorkers(t *testing.T) {
	t.Parallel()
	f := newFixture(t, postgresBackend, kafkaBroker, fastPolicy)
	const keys, copies = 64, 4
	first := map[string]string{}
	var envs []*envelopepb.Envelope
	for r := range copies {
		for k := range keys {
			key := fmt.Sprintf("order:ko%d", k)
			env := f.envelope(key, strconv.Itoa(r))
			if r == 0 {
				first[key] = env.GetMessageId()
			}
			envs = append(envs, env)
		}
	}
	f.publish(envs...)
	f.start(func(ctx context.Context, tx *sql.Tx, m *wrapperspb.StringValue) error {
		time.Sleep(time.Millisecond) // a worker's transaction stays open while others claim
		return insertEffect(ctx, tx, m.GetValue())
	}, func(c *consumer.Config) { c.PerMessageTx, c.FetchSize, c.Workers = false, 16, 4 })
	waitFor(t, "every key handled and every later copy a conflict", func() bool {
		return f.count(f.m.Processed) == keys && f.count(f.m.KeyConflicts) == keys*(copies-1)
	})
	f.drain()
	rows, err := f.db.Query(`SELECT note FROM effects`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	notes := map[string]int{}
	for rows.Next() {
		var note string
		if err := rows.Scan(&note); err != nil {
			t.Fatal(err)
		}
		notes[note]++
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if notes["0"] != keys || len(notes) != 1 {
		t.Errorf("effects by copy = %v, want only the first copies (%d)", notes, keys)
	}
	store, err := dedup.New(dedup.Config{DB: f.db, Dialect: f.dialect})
	if err != nil {
		t.Fatal(err)
	}
	cs, err := store.Conflicts(context.Background(), dedup.ConflictFilter{Limit: keys * copies})
	if err != nil {
		t.Fatal(err)
	}
	late := map[string]bool{}
	for _, c := range cs {
		if c.PriorMessageID != first[c.BizKey] {
			late[c.BizKey] = true
		}
	}
	if len(late) > 0 {
		t.Errorf("%d of %d keys claimed by a later copy before the first: %v", len(late), keys, slices.Sorted(maps.Keys(late)))
	}
	if len(cs) != keys*(copies-1) {
		t.Errorf("%d conflict records, want %d", len(cs), keys*(copies-1))
	}
}
