//go:build rocketmq

package ops

import (
	"context"
	"strings"
	"testing"

	"github.com/msgcontract/msgcontract/internal/cli"
	"github.com/msgcontract/msgcontract/runtime-go/transport/rocketmq"
	"github.com/msgcontract/msgcontract/runtime-go/transport/rocketmq/rocketmqtest"
)

// msgcontract dlq list|show|replay|purge --rocketmq against a real broker
// (make test-rocketmq).
func TestDLQCommandsRocketMQ(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	nameServer, broker := rocketmqtest.Addrs(t)
	ns := rocketmqtest.Namespace()
	tr, err := rocketmq.New(ctx, rocketmq.Config{NameServers: []string{nameServer}, Brokers: []string{broker}, Namespace: ns, QueueNums: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	sub, err := tr.Subscribe(ctx, "payments", []string{"order-event"})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	dlqCommandsRoundTrip(t, tr, sub, []string{"--rocketmq", nameServer, "--namespace", ns}, `\b[0-9]+/[0-9]+\b`)
	code, _, errOut := run(t, "dlq", "list", "--rocketmq", nameServer, "--kafka", "127.0.0.1:9092")
	if code != cli.ExitUsage || !strings.Contains(errOut, "exactly one transport") {
		t.Fatalf("two transports: exit %d %s", code, errOut)
	}
}
