//go:build rabbitmq

package ops

import (
	"context"
	"strings"
	"testing"

	"github.com/msgcontract/msgcontract/internal/cli"
	"github.com/msgcontract/msgcontract/runtime-go/transport/rabbitmq"
	"github.com/msgcontract/msgcontract/runtime-go/transport/rabbitmq/rabbitmqtest"
)

// msgcontract dlq list|show|replay|purge --rabbitmq against a real broker
// (make test-rabbitmq).
func TestDLQCommandsRabbitMQ(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	prefix := rabbitmqtest.Prefix()
	tr := rabbitmqtest.New(t, rabbitmq.Config{Prefix: prefix})
	sub, err := tr.Subscribe(ctx, "payments", []string{"order-event"})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	dlqCommandsRoundTrip(t, tr, sub, []string{"--rabbitmq", rabbitmqtest.URL(t), "--prefix", prefix}, `[0-9a-f]{16}-[0-9a-f]{8}`)
	code, _, errOut := run(t, "dlq", "list", "--rabbitmq", "http://127.0.0.1:1/")
	if code != cli.ExitUsage || !strings.Contains(errOut, "amqp://") {
		t.Fatalf("not an AMQP URL: exit %d %s", code, errOut)
	}
}
