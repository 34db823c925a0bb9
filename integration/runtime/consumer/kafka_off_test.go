//go:build !kafka

package consumer_test

import (
	"context"
	"testing"
	"time"

	"github.com/msgcontract/msgcontract/runtime-go/transport"
)

// Without -tags kafka the Kafka entries are not built: make test-kafka
// runs them against a real broker (see kafka_on_test.go).

func kafkaMatrix() []struct {
	db    dbBackend
	br    brokerKind
	batch bool
} {
	return nil
}

func kafkaProcessTransports() []string { return nil }

func openKafkaProcess(t *testing.T, _ *processFixture) {
	t.Fatal("the kafka transport needs -tags kafka (make test-kafka)")
}

func kafkaChildTransport(context.Context) (transport.Subscriber, bool, error) { return nil, false, nil }

func kafkaForkingBrokers() []func(*testing.T, func() time.Time) (*broker, *forkingSubscriber) {
	return nil
}
