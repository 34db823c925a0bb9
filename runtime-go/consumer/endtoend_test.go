package consumer_test

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/msgcontract/msgcontract/runtime-go/backoff"
	"github.com/msgcontract/msgcontract/runtime-go/classify"
	"github.com/msgcontract/msgcontract/runtime-go/consumer"
	"github.com/msgcontract/msgcontract/runtime-go/envelopepb"
	"github.com/msgcontract/msgcontract/runtime-go/event"
	"github.com/msgcontract/msgcontract/runtime-go/metrics"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb/sqlitedb"
	"github.com/msgcontract/msgcontract/runtime-go/transport/sqlitequeue"
)

// The end-to-end histogram gets one observation per handled delivery, from
// its occurred_at to the consumer's clock after the commit: none for a
// duplicate, a retry scheduled or an envelope without occurred_at, and 0
// for a producer clock ahead of the consumer's. Each transaction mode.
func TestEndToEndLatency(t *testing.T) {
	t.Parallel()
	for _, perMessage := range []bool{true, false} {
		t.Run(fmt.Sprintf("PerMessageTx=%v", perMessage), func(t *testing.T) {
			t.Parallel()
			testEndToEndLatency(t, perMessage)
		})
	}
}

func testEndToEndLatency(t *testing.T, perMessageTx bool) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dir := t.TempDir()
	db, err := sqlitedb.Open(filepath.Join(dir, "business.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	queue, err := sqlitequeue.Open(ctx, filepath.Join(dir, "queue.db"), sqlitequeue.Config{PollInterval: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer queue.Close()
	reg := prometheus.NewRegistry()
	m, err := metrics.New(reg)
	if err != nil {
		t.Fatal(err)
	}
	commitAt := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC) // the consumer's clock stands still
	spec := &event.Spec{FullName: "google.protobuf.StringValue", Topic: "e2e", EventType: "E2E",
		Policy: backoff.Policy{BaseMs: 1000, Multiplier: 2, MaxDelayMs: 60000, MaxRetries: 3},
		Rules:  classify.Rules{Ranges: []classify.Range{{From: 50000, To: 59999, Retryable: true, Name: "system"}}}}
	c, err := consumer.New(consumer.Config{DB: db, Dialect: sqldb.SQLite, Subscriber: queue, Group: "g",
		Metrics: m, Logger: slog.New(slog.DiscardHandler), PerMessageTx: perMessageTx,
		Now: func() time.Time { return commitAt }})
	if err != nil {
		t.Fatal(err)
	}
	err = consumer.Register(c, "h", spec, func() *wrapperspb.StringValue { return &wrapperspb.StringValue{} },
		func(ctx context.Context, tx *sql.Tx, m *wrapperspb.StringValue) error {
			if m.GetValue() == "fail" {
				return classify.NewError(50301, "ledger down")
			}
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	envelope := func(key string, occurred time.Time) *envelopepb.Envelope {
		env, err := event.NewEnvelope(spec, wrapperspb.String(key), key, event.Options{OccurredAt: occurred})
		if err != nil {
			t.Fatal(err)
		}
		return env
	}
	slow := envelope("slow", commitAt.Add(-1500*time.Millisecond)) // 1.5 s: le 2.048
	ahead := envelope("ahead", commitAt.Add(3*time.Second))        // the producer's clock runs ahead: 0
	none := envelope("none", commitAt)
	none.OccurredAt = 0 // a producer that did not set it: not observed
	failing := envelope("fail", commitAt.Add(-time.Second))
	for _, env := range []*envelopepb.Envelope{slow, slow, ahead, none, failing} {
		if err := queue.Publish(ctx, spec.Topic, env); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	count := func(v *prometheus.CounterVec) float64 { return testutil.ToFloat64(v.WithLabelValues("h", "E2E")) }
	for deadline := time.Now().Add(30 * time.Second); count(m.Processed) < 3 || count(m.Deduped) < 1 || count(m.Retried) < 1; {
		if time.Now().After(deadline) {
			t.Fatalf("handled %v, deduplicated %v, retried %v after 30 s", count(m.Processed), count(m.Deduped), count(m.Retried))
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var series int
	for _, f := range families {
		if f.GetName() != metrics.NameEndToEnd {
			continue
		}
		for _, h := range f.GetMetric() {
			series++
			var labels []string
			for _, l := range h.GetLabel() {
				labels = append(labels, l.GetName()+"="+l.GetValue())
			}
			if !slices.Equal(labels, []string{"event_type=E2E", "handler=h"}) {
				t.Errorf("labels = %v", labels)
			}
			hist := h.GetHistogram()
			if hist.GetSampleCount() != 2 || hist.GetSampleSum() != 1.5 {
				t.Errorf("count %d sum %v, want 2 observations summing to 1.5 s", hist.GetSampleCount(), hist.GetSampleSum())
			}
			var edges []float64
			for _, b := range hist.GetBucket() {
				edges = append(edges, b.GetUpperBound())
				want := uint64(1) // the producer ahead, at 0
				if b.GetUpperBound() >= 2.048 {
					want = 2 // and 1.5 s
				}
				if b.GetCumulativeCount() != want {
					t.Errorf("le %v: %d, want %d", b.GetUpperBound(), b.GetCumulativeCount(), want)
				}
			}
			if !slices.Equal(edges, metrics.EndToEndBuckets) {
				t.Errorf("bucket edges %v, want %v", edges, metrics.EndToEndBuckets)
			}
		}
	}
	if series != 1 {
		t.Errorf("%s has %d series, want 1", metrics.NameEndToEnd, series)
	}
}
