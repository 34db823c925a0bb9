//go:build rocketmq

package rocketmq_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	rmq "github.com/apache/rocketmq-client-go/v2"
	rmqconsumer "github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"

	"github.com/msgcontract/msgcontract/runtime-go/backoff"
	"github.com/msgcontract/msgcontract/runtime-go/dlq"
	"github.com/msgcontract/msgcontract/runtime-go/envelope"
	"github.com/msgcontract/msgcontract/runtime-go/envelopepb"
	"github.com/msgcontract/msgcontract/runtime-go/transport"
	"github.com/msgcontract/msgcontract/runtime-go/transport/rocketmq"
	"github.com/msgcontract/msgcontract/runtime-go/transport/rocketmq/rocketmqtest"
	"github.com/msgcontract/msgcontract/runtime-go/transport/transporttest"
)

func newTransport(t *testing.T, mutate func(*rocketmq.Config)) *rocketmq.Transport {
	t.Helper()
	ns, broker := rocketmqtest.Addrs(t)
	cfg := rocketmq.Config{NameServers: []string{ns}, Brokers: []string{broker}, Namespace: rocketmqtest.Namespace(), QueueNums: 1}
	if mutate != nil {
		mutate(&cfg)
	}
	tr, err := rocketmq.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	return tr
}

func TestSuite(t *testing.T) {
	t.Parallel()
	transporttest.Run(t, func(t *testing.T, lease time.Duration) transporttest.Transport {
		return newTransport(t, func(c *rocketmq.Config) { c.Lease = lease })
	})
}

// TestRetryDelays drives 1,000 retries (200 keys, 5 each) on a schedule
// whose every delay passes the broker's timer wheel (1.1 s base, x1.5,
// 100 ms jitter, 3 s cap: all above Config.TimerLead), checks no retry
// copy reaches Fetch before its not_before, and reports how late each
// came (the goal: within ±50 ms). It runs alone (not parallel): the other
// tests of the package would measure their own CPU load into its delays.
func TestRetryDelays(t *testing.T) {
	const keys, retries = 200, 5
	policy := backoff.Policy{BaseMs: 1100, Multiplier: 1.5, JitterMs: 100, MaxDelayMs: 3000, MaxRetries: retries}
	if err := policy.Validate(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	tr := newTransport(t, nil)
	sub, err := tr.Subscribe(ctx, "g", []string{"delays"})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	line := transporttest.RetryDelays(t, ctx, tr, sub, "delays", policy, keys, retries)
	// internal/testsummary's marker: make test-rocketmq's summary and make
	// test's final report show the line.
	t.Logf("msgcontract-suite rocketmq-retry-delays: %s", line)
	fmt.Println("rocketmq retry delays: " + line)
}

// A message dead-lettered twice (its offset was not committed before a
// crash, so the copy that went on comes again and goes on again) is
// listed once, and a purge of it hides the copy too. Many records take
// several pulls to read.
func TestDeadLetterCopiesFold(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tr := newTransport(t, nil)
	sub, err := tr.Subscribe(ctx, "g", []string{"many"})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	const n = 100
	for i := range n {
		if err := tr.Publish(ctx, "many", &envelopepb.Envelope{MessageId: fmt.Sprint("m", i), BizKey: fmt.Sprint("k", i),
			EventType: "E", Topic: "many"}); err != nil {
			t.Fatal(err)
		}
	}
	fctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	var ds []*transport.Delivery
	for len(ds) < n {
		got, err := sub.Fetch(fctx, n)
		if err != nil {
			t.Fatal(err)
		}
		ds = append(ds, got...)
	}
	record := func(d *transport.Delivery) *dlq.Record {
		env, err := envelope.Unmarshal(d.Body)
		if err != nil {
			t.Fatal(err)
		}
		return &dlq.Record{Topic: "many", Group: "g", Handler: "h", BizKey: env.GetBizKey(), MessageID: env.GetMessageId(),
			Envelope: d.Body, Reason: dlq.ReasonNonRetryable, DeadAt: time.Now()}
	}
	for _, d := range ds {
		if err := sub.DeadLetter(ctx, d, record(d)); err != nil {
			t.Fatal(err)
		}
	}
	// The first ten again, as a redelivered copy writes them.
	for _, d := range ds[:10] {
		r := record(d)
		r.DeadAt = time.Now()
		if err := tr.DeadLetterAgain(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	recs, err := tr.List(ctx, dlq.Filter{Limit: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]int{}
	for _, r := range recs {
		keys[r.BizKey]++
	}
	if len(recs) != n || len(keys) != n {
		t.Fatalf("listed %d records of %d keys, want %d of %d", len(recs), len(keys), n, n)
	}
	if got, err := tr.Purge(ctx, dlq.Filter{BizKey: "k3"}); err != nil || got != 1 {
		t.Fatalf("purge k3: %d %v", got, err)
	}
	if recs, _ := tr.List(ctx, dlq.Filter{BizKey: "k3"}); len(recs) != 0 {
		t.Fatalf("k3 after purge: %+v", recs)
	}
}

// A message RocketMQ itself moved to %DLQ%<group> (a member that answered
// RECONSUME_LATER with delay level -1: straight to the dead-letter queue,
// as after its last reconsume) is a dead-letter record: listed with the
// envelope's fields, replayed to the group, purged.
func TestBrokerDLQ(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns, _ := rocketmqtest.Addrs(t)
	tr := newTransport(t, nil)
	sub, err := tr.Subscribe(ctx, "g", []string{"orders"}) // creates the topics and the group
	if err != nil {
		t.Fatal(err)
	}
	if err := sub.Close(); err != nil {
		t.Fatal(err)
	}
	env := &envelopepb.Envelope{MessageId: "m-dlq", BizKey: "order:7", EventType: "E", Topic: "orders", RetryCount: 2}
	if err := tr.Publish(ctx, "orders", env); err != nil {
		t.Fatal(err)
	}
	// A plain RocketMQ member of the group gives up on it at once.
	gaveUp := make(chan struct{}, 1)
	pc, err := rmq.NewPushConsumer(rmqconsumer.WithNsResolver(primitive.NewPassthroughResolver([]string{ns})),
		rmqconsumer.WithGroupName(tr.Namespace()+"g"), rmqconsumer.WithConsumeFromWhere(rmqconsumer.ConsumeFromFirstOffset))
	if err != nil {
		t.Fatal(err)
	}
	err = pc.Subscribe(tr.Namespace()+"orders", rmqconsumer.MessageSelector{}, func(ctx context.Context, msgs ...*primitive.MessageExt) (rmqconsumer.ConsumeResult, error) {
		if cc, ok := primitive.GetConcurrentlyCtx(ctx); ok {
			cc.DelayLevelWhenNextConsume = -1
		}
		select {
		case gaveUp <- struct{}{}:
		default:
		}
		return rmqconsumer.ConsumeRetryLater, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := pc.Start(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-gaveUp:
	case <-time.After(time.Minute):
		t.Fatal("the plain member got nothing")
	}
	var rec dlq.Record
	deadline := time.Now().Add(time.Minute)
	for {
		recs, err := tr.List(ctx, dlq.Filter{Group: "g"})
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) == 1 {
			rec = recs[0]
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the broker's dead letter is not listed: %+v", recs)
		}
		time.Sleep(200 * time.Millisecond)
	}
	_ = pc.Shutdown()
	if !strings.HasPrefix(rec.ID, "%DLQ%"+tr.Namespace()+"g/") || rec.Topic != "orders" || rec.MessageID != "m-dlq" ||
		rec.BizKey != "order:7" || rec.Reason != dlq.ReasonRetriesExhausted {
		t.Fatalf("record: %+v", rec)
	}
	if got, err := tr.Get(ctx, rec.ID); err != nil || got.MessageID != "m-dlq" {
		t.Fatalf("get %s: %+v %v", rec.ID, got, err)
	}
	sub, err = tr.Subscribe(ctx, "g", []string{"orders"})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	if err := tr.Replay(ctx, rec.ID); err != nil {
		t.Fatal(err)
	}
	fctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for {
		ds, err := sub.Fetch(fctx, 10)
		if err != nil {
			t.Fatalf("the replay did not come: %v", err)
		}
		got, _ := envelope.Unmarshal(ds[0].Body)
		if err := sub.Ack(ctx, ds...); err != nil {
			t.Fatal(err)
		}
		if got.GetReplayCount() == 1 && got.GetMessageId() == "m-dlq" {
			break
		}
	}
	if n, err := tr.Purge(ctx, dlq.Filter{Group: "g"}); err != nil || n != 1 {
		t.Fatalf("purge: %d %v", n, err)
	}
	if recs, _ := tr.List(ctx, dlq.Filter{Group: "g"}); len(recs) != 0 {
		t.Fatalf("after purge: %+v", recs)
	}
}
