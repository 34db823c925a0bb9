//go:build !rabbitmq

package consumer_test

import (
	"context"
	"testing"
	"time"

	"github.com/msgcontract/msgcontract/runtime-go/transport"
)

// Without -tags rabbitmq the RabbitMQ entries are not built: make
// test-rabbitmq runs them against a real broker (see rabbitmq_on_test.go).

func rabbitmqMatrix() []matrixEntry { return nil }

func rabbitmqProcessTransports() []string { return nil }

func rabbitmqForkingBrokers() []func(*testing.T, func() time.Time) (*broker, *forkingSubscriber) {
	return nil
}

func openRabbitMQProcess(t *testing.T, _ *processFixture) {
	t.Fatal("the rabbitmq transport needs -tags rabbitmq (make test-rabbitmq)")
}

func rabbitmqChildTransport(context.Context) (transport.Subscriber, bool, error) {
	return nil, false, nil
}
