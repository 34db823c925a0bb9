package kafka

import (
	"context"
	"strconv"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

// BenchmarkDispatch is the subscription's own work per record on the
// consumer's path: take in a poll of 256 records of distinct keys, hand
// them out in one fetch, settle them in one Ack (no broker; allocations
// and CPU of the dispatch only).
func BenchmarkDispatch(b *testing.B) {
	s := newOffline(b)
	ctx := context.Background()
	s.assigned(ctx, s.cl, map[string][]int32{"t": {0}})
	const n = 256
	var off int64
	recs := make([]*kgo.Record, n)
	b.ReportAllocs()
	for b.Loop() {
		for i := range recs {
			recs[i] = &kgo.Record{Topic: "t", Partition: 0, Offset: off, Key: []byte("order:" + strconv.FormatInt(off, 10))}
			off++
		}
		s.mu.Lock()
		s.addAll("t", 0, recs)
		s.notify()
		s.mu.Unlock()
		ds, err := s.Fetch(ctx, n)
		if err != nil || len(ds) != n {
			b.Fatalf("fetched %d, %v", len(ds), err)
		}
		if err := s.Ack(ctx, ds...); err != nil {
			b.Fatal(err)
		}
	}
}
