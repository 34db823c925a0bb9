//go:build rabbitmq

package main

import (
	"context"
	"testing"

	"github.com/msgcontract/msgcontract/internal/dlqopen"
	"github.com/msgcontract/msgcontract/runtime-go/dlq"
	"github.com/msgcontract/msgcontract/runtime-go/transport/rabbitmq/rabbitmqtest"
)

// TestDemoRabbitMQ runs the payment-callback scenario on the real node
// scripts/with-rabbitmq.sh started (make test-demo-rabbitmq): the relay
// publishes the Java outbox's events with runtime-go's rabbitmq
// transport, the Go payment service consumes them with it and the Python
// reconciliation service with runtime-python's RabbitMQ consumer, both
// groups sharing the run's exchanges and queues. Besides the invariants
// every transport must keep, the run's dead-letter address (what the
// console and `msgcontract dlq --rabbitmq` open) must hold both services'
// records.
func TestDemoRabbitMQ(t *testing.T) {
	rabbitmqtest.URL(t) // fails the test without a node; openRabbitMQ reads the same variable
	res := testDemo(t, "rabbitmq")
	if res.DLQ == "" {
		t.Fatal("no dead-letter address for the run")
	}
	ctx := context.Background()
	st, err := dlqopen.Open(ctx, res.DLQ)
	if err != nil {
		t.Fatalf("dlqopen %s: %v", res.DLQ, err)
	}
	defer st.Close()
	recs, err := st.List(ctx, dlq.Filter{Limit: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if want := res.DeadLettered + res.PyDeadLettered; len(recs) != want {
		t.Errorf("%d records at %s, want %d (Go %d, Python %d)", len(recs), res.DLQ, want, res.DeadLettered, res.PyDeadLettered)
	}
}
