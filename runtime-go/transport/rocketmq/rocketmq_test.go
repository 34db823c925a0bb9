//go:build rocketmq

package rocketmq_test

import (
	"context"
	"fmt"
	"testing"
	"time"

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
// whose every delay passes the broker's timer wheel (600 ms base, x1.5,
// 100 ms jitter, 2 s cap: all above Config.TimerLead), checks no retry
// copy reaches Fetch before its not_before, and reports how late each
// came (the goal: within ±50 ms). It runs alone (not parallel): the other
// tests of the package would measure their own CPU load into its delays.
func TestRetryDelays(t *testing.T) {
	const keys, retries = 200, 5
	policy := backoff.Policy{BaseMs: 600, Multiplier: 1.5, JitterMs: 100, MaxDelayMs: 2000, MaxRetries: retries}
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
