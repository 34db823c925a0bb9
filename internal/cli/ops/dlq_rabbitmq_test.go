//go:build rabbitmq

package ops

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/msgcontract/msgcontract/internal/cli"
	"github.com/msgcontract/msgcontract/runtime-go/dlq"
	"github.com/msgcontract/msgcontract/runtime-go/envelope"
	"github.com/msgcontract/msgcontract/runtime-go/envelopepb"
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
	env := &envelopepb.Envelope{MessageId: "m1", BizKey: "order_id:1:PAY_SUCCESS", EventType: "PAY_SUCCESS", Topic: "order-event", RetryCount: 6}
	if err := tr.Publish(ctx, "order-event", env); err != nil {
		t.Fatal(err)
	}
	fctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	ds, err := sub.Fetch(fctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	body, _ := envelope.Marshal(env)
	if err := sub.DeadLetter(ctx, ds[0], &dlq.Record{Topic: "order-event", Group: "payments", Handler: "pay",
		EventType: "PAY_SUCCESS", BizKey: env.BizKey, MessageID: "m1", Envelope: body, Reason: dlq.ReasonRetriesExhausted,
		Code: 50301, Error: "ledger answered 503", Attempts: 7, FirstFailedAt: now, LastFailedAt: now, DeadAt: now}); err != nil {
		t.Fatal(err)
	}
	r := []string{"--rabbitmq", rabbitmqtest.URL(t), "--prefix", prefix}
	code, out, errOut := run(t, append([]string{"dlq", "list", "--topic", "order-event"}, r...)...)
	id := regexp.MustCompile(`[0-9a-f]{16}-[0-9a-f]{8}`).FindString(out)
	if code != cli.ExitOK || id == "" || !strings.Contains(out, "1 record") {
		t.Fatalf("list: exit %d\n%s%s", code, out, errOut)
	}
	code, out, _ = run(t, append([]string{"dlq", "show", id}, r...)...)
	if code != cli.ExitOK || !strings.Contains(out, `"retry_count": 6`) {
		t.Fatalf("show: exit %d\n%s", code, out)
	}
	code, out, _ = run(t, append([]string{"dlq", "replay", id}, r...)...)
	if code != cli.ExitOK || !strings.Contains(out, "1 record replayed") {
		t.Fatalf("replay: exit %d\n%s", code, out)
	}
	ds, err = sub.Fetch(fctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := envelope.Unmarshal(ds[0].Body); err != nil || got.GetRetryCount() != 0 || got.GetMessageId() != "m1" {
		t.Fatalf("replayed: %v %v", got, err)
	}
	code, out, _ = run(t, append([]string{"dlq", "purge", "--all", "--topic", "order-event"}, r...)...)
	if code != cli.ExitOK || !strings.Contains(out, "1 record purged") {
		t.Fatalf("purge: exit %d\n%s", code, out)
	}
	code, out, _ = run(t, append([]string{"dlq", "list", "--topic", "order-event"}, r...)...)
	if code != cli.ExitOK || !strings.Contains(out, "0 records") {
		t.Fatalf("list after purge: exit %d\n%s", code, out)
	}
	code, _, errOut = run(t, "dlq", "list", "--rabbitmq", "http://127.0.0.1:1/")
	if code != cli.ExitUsage || !strings.Contains(errOut, "amqp://") {
		t.Fatalf("not an AMQP URL: exit %d %s", code, errOut)
	}
}
