//go:build rabbitmq

package rabbitmq_test

import (
	"context"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/msgcontract/msgcontract/runtime-go/envelope"
	"github.com/msgcontract/msgcontract/runtime-go/envelopepb"
	"github.com/msgcontract/msgcontract/runtime-go/transport/rabbitmq"
	"github.com/msgcontract/msgcontract/runtime-go/transport/rabbitmq/rabbitmqtest"
)

// TestRetryCopyAfterAFailedForward: a delay queue's dead-letter worker
// that cannot forward an expired retry copy (its exchange P.retry is
// missing, as it can be for a moment while a restarted node recovers its
// definitions, or the group's queue has no leader yet) keeps the copy and
// tries again after the node's dead_letter_worker_publisher_confirm_timeout.
// RabbitMQ's default is 180 s, which left a retry copy undelivered for
// minutes after a broker restart; docs/rabbitmq.md has operators set it
// to 5 s, as scripts/rabbitmq-start.sh does. The copy must arrive once the
// route is back, well within a minute, and must not be lost.
func TestRetryCopyAfterAFailedForward(t *testing.T) {
	ctx := context.Background()
	prefix := rabbitmqtest.Prefix()
	tr := rabbitmqtest.New(t, rabbitmq.Config{Prefix: prefix, Topology: map[string][]string{"f": {"g"}}})
	sub, err := tr.Subscribe(ctx, "g", []string{"f"})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	if err := tr.Publish(ctx, "f", &envelopepb.Envelope{MessageId: "m", BizKey: "k", EventType: "E", Topic: "f"}); err != nil {
		t.Fatal(err)
	}
	fctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	ds, err := sub.Fetch(fctx, 1)
	if err != nil || len(ds) != 1 {
		t.Fatalf("fetch the message: %d deliveries, %v", len(ds), err)
	}

	conn, err := amqp.Dial(rabbitmqtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	retryX, groupQ := prefix+".retry", prefix+"/g/f"
	if err := ch.ExchangeDelete(retryX, false, false); err != nil {
		t.Fatal(err)
	}
	env, err := envelope.Unmarshal(ds[0].Body)
	if err != nil {
		t.Fatal(err)
	}
	// Due in 100 ms: through the 64 ms delay queue, whose worker then
	// finds no P.retry to forward to.
	env.RetryCount, env.NotBefore = 1, time.Now().Add(100*time.Millisecond).UnixMilli()
	if err := sub.Retry(ctx, ds[0], env); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	// The route comes back: the exchange and the group queue's binding to
	// it (deleting an exchange deletes its bindings), as declared by New.
	if err := ch.ExchangeDeclare(retryX, "direct", true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	if err := ch.QueueBind(groupQ, groupQ, retryX, false, nil); err != nil {
		t.Fatal(err)
	}
	back := time.Now()
	rctx, rcancel := context.WithTimeout(ctx, time.Minute)
	defer rcancel()
	ds, err = sub.Fetch(rctx, 1)
	if err != nil || len(ds) != 1 {
		t.Fatalf("the retry copy did not arrive within a minute of its route coming back (%d deliveries, %v): "+
			"is the node's dead_letter_worker_publisher_confirm_timeout at RabbitMQ's default of 180 s? "+
			"docs/rabbitmq.md, \"Broker settings\"", len(ds), err)
	}
	got, err := envelope.Unmarshal(ds[0].Body)
	if err != nil {
		t.Fatal(err)
	}
	if got.GetRetryCount() != 1 || got.GetBizKey() != "k" {
		t.Fatalf("got retry_count %d key %q, want the retry copy of k", got.GetRetryCount(), got.GetBizKey())
	}
	t.Logf("the retry copy arrived %v after its route came back", time.Since(back).Round(time.Millisecond))
	if err := sub.Ack(ctx, ds[0]); err != nil {
		t.Fatal(err)
	}
}
