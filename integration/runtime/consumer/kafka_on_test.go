//go:build kafka

package consumer_test

import (
	"context"
	"os"
	"testing"
	"time"

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
