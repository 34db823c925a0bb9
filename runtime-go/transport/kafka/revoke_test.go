package kafka

import (
	"context"
	"hash/maphash"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/msgcontract/msgcontract/runtime-go/transport"
)

// newOffline is a subscription whose client talks to no broker: enough for
// the dispatch and revoke logic (commits report "not a group member").
func newOffline(t testing.TB) *subscription {
	t.Helper()
	cfg := Config{Brokers: []string{"127.0.0.1:1"}, RevokeWait: time.Minute}
	cfg.setDefaults()
	cl, err := kgo.NewClient(kgo.SeedBrokers(cfg.Brokers...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return &subscription{t: &Transport{cfg: cfg}, cl: cl, origin: map[string]string{"t": "t"},
		parts: map[tp]*partState{}, keys: map[uint64]*keyQueue{}, seed: maphash.MakeSeed(), inflight: map[*entry]struct{}{}, wake: make(chan struct{})}
}

func fetchNow(t *testing.T, s *subscription, n int) []*transport.Delivery {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	ds, err := s.Fetch(ctx, n)
	if err != nil && ctx.Err() == nil {
		t.Fatal(err)
	}
	return ds
}

func ids(ds []*transport.Delivery) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.ID)
	}
	return out
}

// A revoked partition hands nothing more out, waits for its in-flight
// records, then lets go, and its keys' records in other partitions go on.
func TestRevokeWaitsForInFlight(t *testing.T) {
	t.Parallel()
	s := newOffline(t)
	ctx := context.Background()
	s.assigned(ctx, s.cl, map[string][]int32{"t": {0, 1}})
	s.mu.Lock()
	for _, r := range []*kgo.Record{
		{Topic: "t", Partition: 0, Offset: 0, Key: []byte("a")},
		{Topic: "t", Partition: 0, Offset: 1, Key: []byte("b")},
		{Topic: "t", Partition: 0, Offset: 2, Key: []byte("c")},
		{Topic: "t", Partition: 1, Offset: 0, Key: []byte("a")},
	} {
		s.addAll(r.Topic, r.Partition, []*kgo.Record{r})
	}
	s.mu.Unlock()
	ds := fetchNow(t, s, 2)
	if got := ids(ds); len(got) != 2 || got[0] != "t/0/0" || got[1] != "t/0/1" {
		t.Fatalf("first fetch %v, want [t/0/0 t/0/1] (t/1/0 waits for key a)", got)
	}
	done := make(chan struct{})
	go func() {
		s.revoked(ctx, s.cl, map[string][]int32{"t": {0}})
		close(done)
	}()
	select {
	case <-done:
		t.Fatal("revoke returned with two records in flight")
	case <-time.After(50 * time.Millisecond):
	}
	if got := ids(fetchNow(t, s, 10)); len(got) != 0 {
		t.Fatalf("a draining partition handed out %v", got)
	}
	if err := s.Ack(ctx, ds...); err != nil {
		t.Fatal(err)
	}
	<-done
	s.mu.Lock()
	_, kept := s.parts[tp{"t", 0}]
	buffered := s.buffered
	s.mu.Unlock()
	if kept || buffered != 1 {
		t.Fatalf("after revoke: partition kept %v, %d records buffered, want only t/1/0", kept, buffered)
	}
	if got := ids(fetchNow(t, s, 10)); len(got) != 1 || got[0] != "t/1/0" {
		t.Fatalf("after revoke got %v, want [t/1/0]", got)
	}
}

// The commit point is the first unsettled record: settling out of order
// moves it only over the settled prefix.
func TestCommitPointIsSettledPrefix(t *testing.T) {
	t.Parallel()
	s := newOffline(t)
	ctx := context.Background()
	s.assigned(ctx, s.cl, map[string][]int32{"t": {0}})
	s.mu.Lock()
	for i := range 4 {
		s.addAll("t", 0, []*kgo.Record{{Topic: "t", Partition: 0, Offset: int64(10 + i), Key: []byte{byte('a' + i)}}})
	}
	s.mu.Unlock()
	ds := fetchNow(t, s, 4)
	next := func() int64 {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.parts[tp{"t", 0}].next
	}
	steps := []struct {
		ack  int
		want int64
	}{{1, -1}, {3, -1}, {0, 12}, {2, 14}}
	for _, st := range steps {
		if err := s.Ack(ctx, ds[st.ack]); err != nil {
			t.Fatal(err)
		}
		if got := next(); got != st.want {
			t.Fatalf("after acking offset %d: commit point %d, want %d", ds[st.ack].Offset, got, st.want)
		}
	}
}

// Records polled together share their entries' allocation: a key seen
// twice in one poll still hands out one record at a time in offset order,
// records without a key go in parallel, and a key's queue ends with its
// last record (a later record of the key starts a new one).
func TestAddAllKeepsKeyOrder(t *testing.T) {
	t.Parallel()
	s := newOffline(t)
	ctx := context.Background()
	s.assigned(ctx, s.cl, map[string][]int32{"t": {0}})
	s.mu.Lock()
	s.addAll("t", 0, []*kgo.Record{
		{Topic: "t", Partition: 0, Offset: 0, Key: []byte("a")},
		{Topic: "t", Partition: 0, Offset: 1, Key: []byte("b")},
		{Topic: "t", Partition: 0, Offset: 2, Key: []byte("a")},
		{Topic: "t", Partition: 0, Offset: 3},
		{Topic: "t", Partition: 0, Offset: 4},
		{Topic: "t", Partition: 0, Offset: 5, Key: []byte("a")},
	})
	s.mu.Unlock()
	want := [][]string{{"t/0/0", "t/0/1", "t/0/3", "t/0/4"}, {"t/0/2"}, {"t/0/5"}, {"t/0/6"}}
	for i, w := range want {
		if i == 3 { // the key's queue is gone; a new poll brings it back
			s.mu.Lock()
			if len(s.keys) != 0 {
				t.Errorf("key queues left after settling every record: %d", len(s.keys))
			}
			s.addAll("t", 0, []*kgo.Record{{Topic: "t", Partition: 0, Offset: 6, Key: []byte("a")}})
			s.mu.Unlock()
		}
		ds := fetchNow(t, s, 10)
		if got := ids(ds); !slices.Equal(got, w) {
			t.Fatalf("fetch %d: %v, want %v", i+1, got, w)
		}
		if err := s.Ack(ctx, ds...); err != nil {
			t.Fatal(err)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if ps := s.parts[tp{"t", 0}]; ps.next != 7 || s.buffered != 0 || len(s.keys) != 0 {
		t.Fatalf("commit point %d, %d buffered, %d key queues; want 7, 0, 0", ps.next, s.buffered, len(s.keys))
	}
}

// A delivery whose lease ends unsettled is handed out again (Attempt 2),
// also when other deliveries with later leases are in flight, and an
// extended lease holds it back.
func TestExpiredLeaseHandsOutAgain(t *testing.T) {
	t.Parallel()
	s := newOffline(t)
	s.t.cfg.Lease = 300 * time.Millisecond
	ctx := context.Background()
	s.assigned(ctx, s.cl, map[string][]int32{"t": {0}})
	s.mu.Lock()
	s.addAll("t", 0, []*kgo.Record{{Topic: "t", Partition: 0, Offset: 0, Key: []byte("a")},
		{Topic: "t", Partition: 0, Offset: 1, Key: []byte("b")}})
	s.mu.Unlock()
	first := fetchNow(t, s, 1)
	if got := ids(first); !slices.Equal(got, []string{"t/0/0"}) {
		t.Fatalf("first fetch %v", got)
	}
	time.Sleep(100 * time.Millisecond)
	second := fetchNow(t, s, 1) // a later lease, in flight beside the first
	if got := ids(second); !slices.Equal(got, []string{"t/0/1"}) {
		t.Fatalf("second fetch %v", got)
	}
	if err := s.Extend(ctx, second...); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	again, err := s.Fetch(wctx, 10) // waits until the first lease ends
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(again); !slices.Equal(got, []string{"t/0/0"}) || again[0].Attempt != 2 {
		t.Fatalf("after the lease: %v (attempt %d), want [t/0/0] at attempt 2", got, again[0].Attempt)
	}
	if err := s.Ack(ctx, again...); err != nil {
		t.Fatal(err)
	}
	if err := s.Ack(ctx, second...); err != nil {
		t.Fatal(err)
	}
	if got := ids(fetchNow(t, s, 10)); len(got) != 0 {
		t.Fatalf("settled deliveries handed out again: %v", got)
	}
}
