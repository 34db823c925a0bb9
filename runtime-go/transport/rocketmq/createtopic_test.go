//go:build rocketmq

package rocketmq_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/msgcontract/msgcontract/runtime-go/transport/rocketmq"
	"github.com/msgcontract/msgcontract/runtime-go/transport/rocketmq/rocketmqtest"
)

// The transport's own topic creation reads the broker's answer: a topic
// the broker refuses is an error that quotes the broker, and a retry
// topic is created as a DELAY topic, which the proxy's 5.x clients need
// for timer messages (the Java suite sends them); FIFO and TRANSACTION
// topics and an orderly consumer group are created.
func TestCreateTopic(t *testing.T) {
	t.Parallel()
	_, broker := rocketmqtest.Addrs(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ns := rocketmqtest.Namespace()
	if err := rocketmq.CreateTopic(ctx, broker, ns+"billing_retry", 1, "DELAY"); err != nil {
		t.Fatalf("create a DELAY topic: %v", err)
	}
	err := rocketmq.CreateTopic(ctx, broker, ns+"bad", 1, "NO_SUCH_TYPE")
	if err == nil || !strings.Contains(err.Error(), "the broker refused") {
		t.Fatalf("a message type the broker does not know: got %v, want the broker's refusal", err)
	}
	if err := rocketmq.CreateTopic(ctx, "127.0.0.1:1", ns+"x", 1, "NORMAL"); err == nil {
		t.Fatal("no broker: created")
	}
	for _, typ := range []string{"FIFO", "TRANSACTION"} {
		if err := rocketmq.CreateTopic(ctx, broker, ns+typ, 1, typ); err != nil {
			t.Fatalf("create a %s topic: %v", typ, err)
		}
	}
	if err := rocketmq.CreateGroup(ctx, broker, ns+"billing", true); err != nil {
		t.Fatalf("create an orderly group: %v", err)
	}
	if err := rocketmq.CreateGroup(ctx, "127.0.0.1:1", ns+"billing", true); err == nil {
		t.Fatal("no broker: group created")
	}
}
