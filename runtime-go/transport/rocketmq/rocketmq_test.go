//go:build rocketmq

package rocketmq_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/msgcontract/msgcontract/runtime-go/backoff"
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
