//go:build kafka

package kafka_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/msgcontract/msgcontract/runtime-go/dlq"
	"github.com/msgcontract/msgcontract/runtime-go/envelope"
	"github.com/msgcontract/msgcontract/runtime-go/envelopepb"
	"github.com/msgcontract/msgcontract/runtime-go/transport"
	"github.com/msgcontract/msgcontract/runtime-go/transport/kafka"
)

func pub(t *testing.T, tr *kafka.Transport, keys ...string) {
	t.Helper()
	for _, k := range keys {
		env := &envelopepb.Envelope{MessageId: "id-" + k, BizKey: k, EventType: "E", Topic: "sem", Payload: []byte(k)}
		if err := tr.Publish(context.Background(), "sem", env); err != nil {
			t.Fatal(err)
		}
	}
}

func sub(t *testing.T, tr *kafka.Transport, group string) transport.Subscription {
	t.Helper()
	s, err := tr.Subscribe(context.Background(), group, []string{"sem"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func take(t *testing.T, s transport.Subscription, n int) []*transport.Delivery {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out []*transport.Delivery
	for len(out) < n {
		ds, err := s.Fetch(ctx, n-len(out))
		if err != nil {
			t.Fatalf("fetch after %d of %d: %v", len(out), n, err)
		}
		out = append(out, ds...)
	}
	return out
}

func nothing(t *testing.T, s transport.Subscription, d time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	ds, err := s.Fetch(ctx, 10)
	if len(ds) > 0 {
		t.Fatalf("unexpected delivery of %s", key(t, ds[0]))
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("fetch: %v", err)
	}
}

func key(t *testing.T, d *transport.Delivery) string {
	t.Helper()
	env, err := envelope.Unmarshal(d.Body)
	if err != nil {
		t.Fatal(err)
	}
	return env.GetBizKey()
}

func keys(t *testing.T, ds []*transport.Delivery) []string {
	var out []string
	for _, d := range ds {
		out = append(out, key(t, d))
	}
	return out
}

// Only the settled prefix of a partition is committed: a member that
// closes with a gap hands the gap and everything after it to the next
// member, and nothing before it.
func TestCommitsOnlyTheSettledPrefix(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	tr := newTransport(t, func(c *kafka.Config) { c.Registerer = reg })
	pub(t, tr, "k1", "k2", "k3")
	s1 := sub(t, tr, "g")
	ds := take(t, s1, 3)
	if err := s1.Ack(context.Background(), ds[0], ds[2]); err != nil {
		t.Fatal(err)
	}
	if err := s1.Close(); err != nil {
		t.Fatal(err)
	}
	var backlog int64
	waitUntil(t, "the backlog (a new retry topic may not be served yet)", func() bool {
		n, err := tr.Backlog(context.Background(), "g", "sem")
		backlog = n
		return err == nil
	})
	if backlog != 2 {
		t.Fatalf("backlog after close = %d, want 2 (k2 unsettled, k3 after it)", backlog)
	}
	s2 := sub(t, tr, "g")
	again := take(t, s2, 2)
	if got := fmt.Sprint(keys(t, again)); got != "[k2 k3]" {
		t.Fatalf("the next member got %s, want [k2 k3]", got)
	}
	if err := s2.Ack(context.Background(), again...); err != nil {
		t.Fatal(err)
	}
	nothing(t, s2, 300*time.Millisecond)
	mfs, err := reg.Gather()
	if err != nil || len(mfs) != 1 || mfs[0].GetName() != "msgcontract_consumer_lag_messages" {
		t.Fatalf("lag metric: %v %v", mfs, err)
	}
	if v := mfs[0].GetMetric()[0].GetGauge().GetValue(); v != 0 {
		t.Errorf("lag after reading everything = %v, want 0", v)
	}
}

// A deferred record (a retry not due yet) holds its own key and its
// offset, never the other keys of its partition.
func TestDeferDoesNotStallOtherKeys(t *testing.T) {
	t.Parallel()
	tr := newTransport(t, nil)
	pub(t, tr, "slow", "fast")
	s := sub(t, tr, "g")
	d := take(t, s, 1)[0]
	if key(t, d) != "slow" {
		t.Fatalf("first delivery %s", key(t, d))
	}
	if err := s.Defer(context.Background(), d, time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	next := take(t, s, 1)[0]
	if key(t, next) != "fast" {
		t.Fatalf("second delivery %s, want fast", key(t, next))
	}
	if err := s.Ack(context.Background(), next); err != nil {
		t.Fatal(err)
	}
	nothing(t, s, 300*time.Millisecond)
}

// Records of one key are handed out one at a time, in order; other keys
// are not held up by them.
func TestOneKeyAtATime(t *testing.T) {
	t.Parallel()
	tr := newTransport(t, nil)
	pub(t, tr, "k", "k", "other")
	s := sub(t, tr, "g")
	ds := take(t, s, 2)
	if got := fmt.Sprint(keys(t, ds)); got != "[k other]" {
		t.Fatalf("got %s, want [k other]", got)
	}
	nothing(t, s, 300*time.Millisecond)
	if err := s.Ack(context.Background(), ds...); err != nil {
		t.Fatal(err)
	}
	second := take(t, s, 1)[0]
	if key(t, second) != "k" || second.Offset != ds[0].Offset+1 {
		t.Fatalf("second k at offset %d after %d", second.Offset, ds[0].Offset)
	}
}

// A member joining mid-stream takes partitions over through a revoke that
// commits what the first member settled: no record is delivered twice.
func TestRebalanceHandsOverCleanly(t *testing.T) {
	t.Parallel()
	const n = 200
	tr := newTransport(t, func(c *kafka.Config) { c.Partitions = 4 })
	var want []string
	for i := range n {
		want = append(want, fmt.Sprintf("key-%03d", i))
	}
	pub(t, tr, want...)
	var (
		mu   sync.Mutex
		seen = map[string]int{}
	)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	total := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(seen)
	}
	secondGot := make(chan struct{})
	var once sync.Once
	consume := func(s transport.Subscription, first bool) {
		defer wg.Done()
		for {
			ds, err := s.Fetch(ctx, 5)
			if err != nil {
				return
			}
			for _, d := range ds {
				mu.Lock()
				seen[key(t, d)]++
				mu.Unlock()
			}
			if err := s.Ack(ctx, ds...); err != nil {
				t.Error(err)
			}
			if !first {
				once.Do(func() { close(secondGot) })
			} else if total() >= n/10 {
				// Hold still (nothing in flight) until the second member
				// has partitions: its records come after a revoke here.
				select {
				case <-secondGot:
				case <-ctx.Done():
				}
			}
		}
	}
	s1 := sub(t, tr, "g")
	wg.Add(1)
	go consume(s1, true)
	waitUntil(t, "the first member to start", func() bool { return total() >= n/10 })
	s2 := sub(t, tr, "g")
	wg.Add(1)
	go consume(s2, false)
	waitUntil(t, "every key delivered", func() bool { return total() == n })
	waitUntil(t, "every offset committed", func() bool {
		b, err := tr.Backlog(context.Background(), "g", "sem")
		return err == nil && b == 0
	})
	cancel()
	wg.Wait()
	for k, c := range seen {
		if c != 1 {
			t.Errorf("%s delivered %d times", k, c)
		}
	}
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A message dead-lettered twice (a crash before its offset was committed
// delivers it again) is one record to list, show, replay and purge.
func TestDeadLetterCopiesFold(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tr := newTransport(t, nil)
	pub(t, tr, "poison", "other")
	s := sub(t, tr, "g")
	ds := take(t, s, 2)
	now := time.UnixMilli(time.Now().UnixMilli()).UTC()
	for _, d := range []*transport.Delivery{ds[0], ds[0], ds[1]} { // ds[0] twice: the copy
		rec := &dlq.Record{Topic: "sem", Group: "g", Handler: "h", BizKey: key(t, d), MessageID: "id-" + key(t, d),
			Envelope: d.Body, Reason: dlq.ReasonNonRetryable, Code: 40001, Attempts: 1, DeadAt: now}
		if err := s.DeadLetter(ctx, d, rec); err != nil {
			t.Fatal(err)
		}
	}
	recs, err := tr.List(ctx, dlq.Filter{})
	if err != nil || len(recs) != 2 || recs[0].BizKey != "poison" || recs[1].BizKey != "other" {
		t.Fatalf("list: %+v %v, want poison once and other", recs, err)
	}
	if n, err := tr.Purge(ctx, dlq.Filter{BizKey: "poison"}); err != nil || n != 1 {
		t.Fatalf("purge: %d %v", n, err)
	}
	if recs, err := tr.List(ctx, dlq.Filter{}); err != nil || len(recs) != 1 || recs[0].BizKey != "other" {
		t.Fatalf("after purge: %+v %v, want other only (the copy purged with its first)", recs, err)
	}
}
