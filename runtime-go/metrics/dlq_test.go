package metrics_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/msgcontract/msgcontract/runtime-go/dlq"
	"github.com/msgcontract/msgcontract/runtime-go/metrics"
	"github.com/msgcontract/msgcontract/runtime-go/transport/sqlitequeue"
)

// The DLQ gauge reads the embedded queue's dead-letter table at scrape
// time: records per topic and group, replayed ones left out.
func TestDLQCollector(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	q, err := sqlitequeue.Open(ctx, filepath.Join(t.TempDir(), "q.db"), sqlitequeue.Config{Lease: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	for range 3 {
		if err := q.PublishRaw(ctx, "orders", []byte("not an envelope")); err != nil {
			t.Fatal(err)
		}
	}
	sub, err := q.Subscribe(ctx, "payments", []string{"orders"})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	ds, err := sub.Fetch(ctx, 3)
	if err != nil || len(ds) != 3 {
		t.Fatalf("fetch: %d deliveries, %v", len(ds), err)
	}
	for _, d := range ds {
		if err := sub.DeadLetter(ctx, d, &dlq.Record{Topic: "orders", Group: "payments", Envelope: d.Body,
			Reason: dlq.ReasonDecode, DeadAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	c := metrics.NewDLQCollector(q, 5*time.Second)
	want := `# HELP msgcontract_dlq_messages Dead-letter records not replayed, read from the store at scrape time.
# TYPE msgcontract_dlq_messages gauge
msgcontract_dlq_messages{group="payments",topic="orders"} 3
`
	if err := testutil.CollectAndCompare(c, strings.NewReader(want)); err != nil {
		t.Error(err)
	}
	recs, err := q.List(ctx, dlq.Filter{Limit: 1})
	if err != nil || len(recs) != 1 {
		t.Fatalf("list: %v %v", recs, err)
	}
	if err := q.Replay(ctx, recs[0].ID); err == nil {
		t.Fatal("replaying a record that is not an envelope must fail")
	}
	// Purging one leaves two.
	if _, err := q.Purge(ctx, dlq.Filter{IDs: []string{recs[0].ID}}); err != nil {
		t.Fatal(err)
	}
	if err := testutil.CollectAndCompare(c, strings.NewReader(strings.Replace(want, "} 3", "} 2", 1))); err != nil {
		t.Error(err)
	}
}
