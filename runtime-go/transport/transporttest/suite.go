// Package transporttest is the suite every transport must pass, in the
// spirit of watermill's universal pub/sub tests. A transport's own tests
// call Run with a factory.
package transporttest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/msgcontract/msgcontract/runtime-go/dlq"
	"github.com/msgcontract/msgcontract/runtime-go/envelope"
	"github.com/msgcontract/msgcontract/runtime-go/envelopepb"
	"github.com/msgcontract/msgcontract/runtime-go/transport"
)

// Transport is what the suite drives.
type Transport interface {
	transport.Publisher
	transport.Subscriber
	dlq.Store
}

// Factory returns a fresh, empty transport whose lease (visibility
// timeout, ack wait) is lease.
type Factory func(t *testing.T, lease time.Duration) Transport

const waitLimit = 60 * time.Second

// Run runs the suite.
func Run(t *testing.T, newTransport Factory) {
	tests := []struct {
		name string
		run  func(t *testing.T, newTransport Factory)
	}{
		{"PublishFetchAck", publishFetchAck},
		{"FanOutToGroups", fanOut},
		{"RedeliveryAfterLease", redelivery},
		{"Defer", deferDelivery},
		{"RetryStaysInGroup", retryStaysInGroup},
		{"DeadLetterAndDLQ", deadLetter},
		{"DLQListAfterReplays", dlqListAfterReplays},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.run(t, newTransport)
		})
	}
}

func env(key string) *envelopepb.Envelope {
	return &envelopepb.Envelope{MessageId: "id-" + key, BizKey: key, EventType: "E", Topic: "suite",
		ContentType: "application/protobuf", Payload: []byte(key)}
}

func subscribe(t *testing.T, tr Transport, group string) transport.Subscription {
	t.Helper()
	sub, err := tr.Subscribe(context.Background(), group, []string{"suite"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sub.Close() })
	return sub
}

func publish(t *testing.T, tr Transport, keys ...string) {
	t.Helper()
	for _, k := range keys {
		if err := tr.Publish(context.Background(), "suite", env(k)); err != nil {
			t.Fatal(err)
		}
	}
}

// fetch collects exactly n deliveries.
func fetch(t *testing.T, sub transport.Subscription, n int) []*transport.Delivery {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	var out []*transport.Delivery
	for len(out) < n {
		ds, err := sub.Fetch(ctx, n-len(out))
		if err != nil {
			t.Fatalf("fetch after %d of %d deliveries: %v", len(out), n, err)
		}
		out = append(out, ds...)
	}
	return out
}

// none asserts nothing is delivered within d.
func none(t *testing.T, sub transport.Subscription, d time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	ds, err := sub.Fetch(ctx, 10)
	if len(ds) > 0 {
		t.Fatalf("unexpected delivery %s", decode(t, ds[0]).GetBizKey())
	}
	if err != nil && !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("fetch: %v", err)
	}
}

func decode(t *testing.T, d *transport.Delivery) *envelopepb.Envelope {
	t.Helper()
	e, err := envelope.Unmarshal(d.Body)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func ack(t *testing.T, sub transport.Subscription, ds ...*transport.Delivery) {
	t.Helper()
	if err := sub.Ack(context.Background(), ds...); err != nil {
		t.Fatal(err)
	}
}

func publishFetchAck(t *testing.T, newTransport Factory) {
	tr := newTransport(t, time.Minute)
	publish(t, tr, "a", "b", "c") // before any subscription: kept
	sub := subscribe(t, tr, "g")
	ds := fetch(t, sub, 3)
	for i, want := range []string{"a", "b", "c"} {
		if got := decode(t, ds[i]).GetBizKey(); got != want {
			t.Errorf("delivery %d = %s, want %s (publish order)", i, got, want)
		}
		if ds[i].Topic != "suite" || ds[i].Attempt != 1 || ds[i].ID == "" {
			t.Errorf("delivery %d: topic %q attempt %d id %q", i, ds[i].Topic, ds[i].Attempt, ds[i].ID)
		}
	}
	ack(t, sub, ds...)
	none(t, sub, 300*time.Millisecond)
}

func fanOut(t *testing.T, newTransport Factory) {
	tr := newTransport(t, time.Minute)
	s1, s2 := subscribe(t, tr, "g1"), subscribe(t, tr, "g2")
	publish(t, tr, "x")
	for _, s := range []transport.Subscription{s1, s2} {
		ds := fetch(t, s, 1)
		if decode(t, ds[0]).GetBizKey() != "x" {
			t.Fatal("wrong message")
		}
		ack(t, s, ds...)
		none(t, s, 200*time.Millisecond)
	}
}

func redelivery(t *testing.T, newTransport Factory) {
	tr := newTransport(t, time.Second)
	sub := subscribe(t, tr, "g")
	publish(t, tr, "r")
	first := fetch(t, sub, 1)[0]
	// Not settled: it comes back once the lease expires.
	again := fetch(t, sub, 1)[0]
	if decode(t, again).GetBizKey() != "r" || again.Attempt != first.Attempt+1 {
		t.Fatalf("redelivery attempt %d after %d", again.Attempt, first.Attempt)
	}
	ack(t, sub, again)
	none(t, sub, 1500*time.Millisecond)
}

func deferDelivery(t *testing.T, newTransport Factory) {
	tr := newTransport(t, time.Minute)
	sub := subscribe(t, tr, "g")
	publish(t, tr, "d")
	d := fetch(t, sub, 1)[0]
	if err := sub.Defer(context.Background(), d, time.Now().Add(300*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	d2 := fetch(t, sub, 1)[0]
	if decode(t, d2).GetBizKey() != "d" {
		t.Fatal("wrong message")
	}
	ack(t, sub, d2)
}

func retryStaysInGroup(t *testing.T, newTransport Factory) {
	tr := newTransport(t, time.Minute)
	s1, s2 := subscribe(t, tr, "g1"), subscribe(t, tr, "g2")
	publish(t, tr, "k")
	d := fetch(t, s1, 1)[0]
	ack(t, s2, fetch(t, s2, 1)...)
	retry := decode(t, d)
	retry.RetryCount = 1
	retry.NotBefore = time.Now().UnixMilli()
	if err := s1.Retry(context.Background(), d, retry); err != nil {
		t.Fatal(err)
	}
	r := fetch(t, s1, 1)[0]
	if got := decode(t, r); got.GetRetryCount() != 1 || got.GetBizKey() != "k" {
		t.Fatalf("retry copy: %v", got)
	}
	if r.ID == d.ID {
		t.Error("the retry reuses the transport id; broker dedup could drop it")
	}
	if r.Topic != "suite" {
		t.Errorf("retry topic = %q", r.Topic)
	}
	ack(t, s1, r)
	none(t, s2, 300*time.Millisecond)
}

func deadLetter(t *testing.T, newTransport Factory) {
	ctx := context.Background()
	tr := newTransport(t, time.Minute)
	sub := subscribe(t, tr, "g")
	orig := env("dead")
	orig.LastError = &envelopepb.LastError{Code: 50001, Message: "boom"}
	orig.RetryCount = 3
	if err := tr.Publish(ctx, "suite", orig); err != nil {
		t.Fatal(err)
	}
	d := fetch(t, sub, 1)[0]
	now := time.UnixMilli(time.Now().UnixMilli()).UTC()
	rec := &dlq.Record{Topic: "suite", Group: "g", Handler: "h", EventType: "E", BizKey: "dead", MessageID: "id-dead",
		Envelope: d.Body, Reason: dlq.ReasonRetriesExhausted, Code: 50001, Error: "boom", Attempts: 4,
		FirstFailedAt: now.Add(-time.Second), LastFailedAt: now, DeadAt: now}
	if err := sub.DeadLetter(ctx, d, rec); err != nil {
		t.Fatal(err)
	}
	none(t, sub, 300*time.Millisecond)
	recs, err := tr.List(ctx, dlq.Filter{Group: "g"})
	if err != nil || len(recs) != 1 {
		t.Fatalf("list: %v %v", recs, err)
	}
	got, err := tr.Get(ctx, recs[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if string(got.Envelope) != string(d.Body) || got.Reason != rec.Reason || got.Attempts != 4 || got.Code != 50001 ||
		!got.FirstFailedAt.Equal(rec.FirstFailedAt) || !got.LastFailedAt.Equal(rec.LastFailedAt) {
		t.Errorf("show: %+v", got)
	}
	if _, err := tr.Get(ctx, "999999"); !errors.Is(err, dlq.ErrNotFound) {
		t.Errorf("get unknown: %v", err)
	}
	if err := tr.Replay(ctx, got.ID); err != nil {
		t.Fatal(err)
	}
	r := fetch(t, sub, 1)[0]
	re := decode(t, r)
	if re.GetRetryCount() != 0 || re.GetLastError().GetCode() != 50001 || re.GetBizKey() != "dead" {
		t.Errorf("replayed envelope: %v", re)
	}
	ack(t, sub, r)
	recs, _ = tr.List(ctx, dlq.Filter{OnlyReplayed: true})
	if len(recs) != 1 || recs[0].ReplayCount != 1 || recs[0].LastReplayedAt.IsZero() {
		t.Fatalf("after replay: %+v", recs)
	}
	n, err := tr.Purge(ctx, dlq.Filter{})
	if err != nil || n != 1 {
		t.Fatalf("purge: %d %v", n, err)
	}
	if recs, _ := tr.List(ctx, dlq.Filter{}); len(recs) != 0 {
		t.Fatalf("after purge: %d records", len(recs))
	}
}

// dlqListAfterReplays lists a dead-letter destination whose ids have gaps
// (replays store a record again under a new id): every record once, oldest
// first, Limit respected.
func dlqListAfterReplays(t *testing.T, newTransport Factory) {
	ctx := context.Background()
	tr := newTransport(t, time.Minute)
	sub := subscribe(t, tr, "g")
	keys := []string{"d0", "d1", "d2", "d3", "d4"}
	for _, k := range keys {
		if err := tr.Publish(ctx, "suite", env(k)); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Now().UTC()
	for _, d := range fetch(t, sub, len(keys)) {
		k := decode(t, d).GetBizKey()
		rec := &dlq.Record{Topic: "suite", Group: "g", Handler: "h", EventType: "E", BizKey: k, MessageID: "id-" + k,
			Envelope: d.Body, Reason: dlq.ReasonNonRetryable, Code: 40001, Error: "no", Attempts: 1,
			FirstFailedAt: now, LastFailedAt: now, DeadAt: now}
		if err := sub.DeadLetter(ctx, d, rec); err != nil {
			t.Fatal(err)
		}
	}
	byKey := func() map[string]dlq.Record {
		t.Helper()
		recs, err := tr.List(ctx, dlq.Filter{Group: "g"})
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]dlq.Record{}
		for _, r := range recs {
			if _, dup := m[r.BizKey]; dup {
				t.Fatalf("record of %s listed twice: %+v", r.BizKey, recs)
			}
			m[r.BizKey] = r
		}
		if len(m) != len(keys) {
			t.Fatalf("listed %d records, want %d: %+v", len(m), len(keys), recs)
		}
		return m
	}
	for range 3 {
		recs := byKey()
		for _, k := range []string{"d1", "d3"} {
			if err := tr.Replay(ctx, recs[k].ID); err != nil {
				t.Fatal(err)
			}
			ack(t, sub, fetch(t, sub, 1)[0])
		}
	}
	recs := byKey()
	if recs["d1"].ReplayCount != 3 || recs["d0"].ReplayCount != 0 {
		t.Errorf("replay counts: d1 %d, d0 %d; want 3, 0", recs["d1"].ReplayCount, recs["d0"].ReplayCount)
	}
	two, err := tr.List(ctx, dlq.Filter{Group: "g", Limit: 2})
	if err != nil || len(two) != 2 || two[0].BizKey != "d0" {
		t.Fatalf("Limit 2: %v %+v, want the two oldest records starting with d0", err, two)
	}
}
