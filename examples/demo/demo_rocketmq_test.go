//go:build rocketmq

package main

import (
	"context"
	"os"
	"testing"

	"github.com/msgcontract/msgcontract/internal/dlqopen"
	"github.com/msgcontract/msgcontract/runtime-go/dlq"
	"github.com/msgcontract/msgcontract/runtime-go/transport/rocketmq/rocketmqtest"
)

// TestDemoRocketMQ runs the payment-callback scenario on the real broker
// scripts/with-rocketmq.sh started (make test-demo-rocketmq): the relay
// publishes the Java outbox's events with runtime-go's rocketmq
// transport, the Go payment service consumes them with it and the Python
// reconciliation service with runtime-python's RocketMQ member through the
// proxy, each group on the run's topics. Besides the invariants every
// transport must keep, the run's dead-letter address (what the console and
// `msgcontract dlq --rocketmq` open) must hold both services' records.
func TestDemoRocketMQ(t *testing.T) {
	rocketmqtest.Addrs(t) // fails the test without a broker; openRocketMQ reads the same variables
	if os.Getenv(rocketmqProxyEnv) == "" {
		t.Fatalf("%s is not set: run under scripts/with-rocketmq.sh (make test-demo-rocketmq)", rocketmqProxyEnv)
	}
	res := testDemo(t, "rocketmq")
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
