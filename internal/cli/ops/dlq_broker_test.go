//go:build rabbitmq || rocketmq

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
	"github.com/msgcontract/msgcontract/runtime-go/transport"
)

// dlqCommandsRoundTrip dead-letters one message of group payments on
// topic order-event through sub, then drives msgcontract dlq list, show,
// replay and purge with flags (the broker's): the record is listed (its
// id matching idPattern), shown, replayed to sub and purged.
func dlqCommandsRoundTrip(t *testing.T, pub transport.Publisher, sub transport.Subscription, flags []string, idPattern string) {
	t.Helper()
	ctx := context.Background()
	env := &envelopepb.Envelope{MessageId: "m1", BizKey: "order_id:1:PAY_SUCCESS", EventType: "PAY_SUCCESS", Topic: "order-event", RetryCount: 6}
	if err := pub.Publish(ctx, "order-event", env); err != nil {
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
	code, out, errOut := run(t, append([]string{"dlq", "list", "--topic", "order-event"}, flags...)...)
	id := regexp.MustCompile(idPattern).FindString(out)
	if code != cli.ExitOK || id == "" || !strings.Contains(out, "1 record") {
		t.Fatalf("list: exit %d\n%s%s", code, out, errOut)
	}
	code, out, _ = run(t, append([]string{"dlq", "show", id}, flags...)...)
	if code != cli.ExitOK || !strings.Contains(out, `"retry_count": 6`) {
		t.Fatalf("show: exit %d\n%s", code, out)
	}
	code, out, errOut = run(t, append([]string{"dlq", "replay", id}, flags...)...)
	if code != cli.ExitOK || !strings.Contains(out, "1 record replayed") {
		t.Fatalf("replay: exit %d\n%s%s", code, out, errOut)
	}
	ds, err = sub.Fetch(fctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := envelope.Unmarshal(ds[0].Body); err != nil || got.GetRetryCount() != 0 || got.GetMessageId() != "m1" {
		t.Fatalf("replayed: %v %v", got, err)
	}
	if err := sub.Ack(ctx, ds[0]); err != nil {
		t.Fatal(err)
	}
	code, out, _ = run(t, append([]string{"dlq", "purge", "--all", "--topic", "order-event"}, flags...)...)
	if code != cli.ExitOK || !strings.Contains(out, "1 record purged") {
		t.Fatalf("purge: exit %d\n%s", code, out)
	}
	code, out, _ = run(t, append([]string{"dlq", "list", "--topic", "order-event"}, flags...)...)
	if code != cli.ExitOK || !strings.Contains(out, "0 records") {
		t.Fatalf("list after purge: exit %d\n%s", code, out)
	}
}
