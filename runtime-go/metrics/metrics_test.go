package metrics_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/msgcontract/msgcontract/runtime-go/metrics"
)

// newMetrics registers the metrics on a registry of their own.
func newMetrics(t *testing.T) (*prometheus.Registry, *metrics.Prometheus) {
	t.Helper()
	reg := prometheus.NewRegistry()
	m, err := metrics.New(reg)
	if err != nil {
		t.Fatal(err)
	}
	return reg, m
}

// The names, labels and outcome values are docs/DESIGN.md's vocabulary,
// which the Java and Python runtimes and ops/ share.
func TestNamesAndLabels(t *testing.T) {
	t.Parallel()
	reg, m := newMetrics(t)
	for _, o := range []string{metrics.OutcomeHandled, metrics.OutcomeDeduplicated, metrics.OutcomeRetryScheduled,
		metrics.OutcomeDeadLettered, metrics.OutcomeConflict} {
		m.Inc("h", "E", o)
	}
	m.IncHandedBack("h", "E")
	m.ObserveHandler("h", "E", time.Millisecond)
	m.ObserveRetryDelay("h", "E", 2*time.Second)
	m.ObserveEndToEnd("h", "E", time.Second)
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var names, outcomes []string
	for _, f := range families {
		names = append(names, f.GetName())
		for _, metric := range f.GetMetric() {
			var labels []string
			for _, l := range metric.GetLabel() {
				if l.GetName() == metrics.LabelOutcome {
					outcomes = append(outcomes, l.GetValue())
					continue
				}
				labels = append(labels, l.GetName()+"="+l.GetValue())
			}
			if !slices.Equal(labels, []string{"event_type=E", "handler=h"}) {
				t.Errorf("%s labels = %v", f.GetName(), labels)
			}
		}
	}
	want := []string{metrics.NameEndToEnd, metrics.NameHandlerDuration, metrics.NameHandedBack, metrics.NameProcessed,
		metrics.NameRetryDelay}
	if !slices.Equal(names, want) {
		t.Errorf("metric names = %v, want %v", names, want)
	}
	slices.Sort(outcomes)
	if got := strings.Join(outcomes, ","); got != "conflict,dead_lettered,deduplicated,handled,retry_scheduled" {
		t.Errorf("outcomes = %s", got)
	}
	// The curried vectors count into the one counter.
	if got := testutil.ToFloat64(m.Retried.WithLabelValues("h", "E")); got != 1 {
		t.Errorf("retry_scheduled = %v, want 1", got)
	}
	// A second registration on the same registry is an error, not a panic.
	if _, err := metrics.New(reg); err == nil {
		t.Error("registering twice on one registry must fail")
	}
	// A nil *Prometheus records nothing and does not panic.
	var none *metrics.Prometheus
	none.Inc("h", "E", metrics.OutcomeHandled)
	none.ObserveHandler("h", "E", time.Second)
	none.ObserveRetryDelay("h", "E", time.Second)
	none.ObserveEndToEnd("h", "E", time.Second)
	none.IncHandedBack("h", "E")
}

// A Route counts into the same series as Inc and ObserveHandler, makes a
// series only when it is used, and a nil one records nothing.
func TestRoute(t *testing.T) {
	t.Parallel()
	_, m := newMetrics(t)
	r := m.Route("h", "E")
	if n := testutil.CollectAndCount(m.Messages); n != 0 {
		t.Fatalf("series before any use = %d, want 0", n)
	}
	r.Inc(metrics.OutcomeHandled)
	r.Inc(metrics.OutcomeHandled)
	m.Inc("h", "E", metrics.OutcomeHandled)
	r.Inc(metrics.OutcomeDeduplicated)
	r.Inc(metrics.OutcomeConflict)
	r.ObserveHandler(time.Millisecond)
	for outcome, want := range map[string]float64{metrics.OutcomeHandled: 3, metrics.OutcomeDeduplicated: 1,
		metrics.OutcomeConflict: 1} {
		if got := testutil.ToFloat64(m.Messages.WithLabelValues("h", "E", outcome)); got != want {
			t.Errorf("%s = %v, want %v", outcome, got, want)
		}
	}
	if n := testutil.CollectAndCount(m.Messages); n != 3 {
		t.Errorf("series = %d, want 3", n)
	}
	if n := testutil.CollectAndCount(m.HandlerDuration); n != 1 {
		t.Errorf("handler duration series = %d, want 1", n)
	}
	r.IncHandedBack()
	m.IncHandedBack("h", "E")
	if got := testutil.ToFloat64(m.HandedBack.WithLabelValues("h", "E")); got != 2 {
		t.Errorf("handed back = %v, want 2", got)
	}
	r.ObserveRetryDelay(2 * time.Second)
	if n := testutil.CollectAndCount(m.RetryDelay); n != 1 {
		t.Errorf("retry delay series = %d, want 1", n)
	}
	r.ObserveEndToEnd(time.Second)
	m.ObserveEndToEnd("h", "E", time.Second)
	if n := testutil.CollectAndCount(m.EndToEnd); n != 1 {
		t.Errorf("end-to-end series = %d, want 1", n)
	}
	var none *metrics.Prometheus
	none.Route("h", "E").Inc(metrics.OutcomeHandled)
	none.Route("h", "E").ObserveHandler(time.Second)
	none.Route("h", "E").ObserveRetryDelay(time.Second)
	none.Route("h", "E").ObserveEndToEnd(time.Second)
	none.Route("h", "E").IncHandedBack()
}

// The end-to-end histogram's le values as the text format writes them, the
// list runtime-java's and runtime-python's tests hold too; an observation
// lands in the first bucket at or above it.
func TestEndToEndBuckets(t *testing.T) {
	t.Parallel()
	reg, m := newMetrics(t)
	m.ObserveEndToEnd("h", "E", 1500*time.Millisecond)
	m.ObserveEndToEnd("h", "E", time.Hour) // past the last edge: +Inf only
	les := []string{"0.001", "0.002", "0.004", "0.008", "0.016", "0.032", "0.064", "0.128", "0.256", "0.512",
		"1.024", "2.048", "4.096", "8.192", "16.384", "32.768", "65.536", "131.072", "262.144", "524.288",
		"1048.576", "2097.152"}
	var want strings.Builder
	fmt.Fprintf(&want, "# HELP %s %s\n# TYPE %s histogram\n", metrics.NameEndToEnd, metrics.EndToEndHelp, metrics.NameEndToEnd)
	for i, le := range les {
		n := 0
		if i >= slices.Index(les, "2.048") {
			n = 1 // the 1.5 s
		}
		fmt.Fprintf(&want, "%s_bucket{event_type=\"E\",handler=\"h\",le=\"%s\"} %d\n", metrics.NameEndToEnd, le, n)
	}
	fmt.Fprintf(&want, "%s_bucket{event_type=\"E\",handler=\"h\",le=\"+Inf\"} 2\n", metrics.NameEndToEnd)
	fmt.Fprintf(&want, "%s_sum{event_type=\"E\",handler=\"h\"} 3601.5\n%s_count{event_type=\"E\",handler=\"h\"} 2\n",
		metrics.NameEndToEnd, metrics.NameEndToEnd)
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want.String()), metrics.NameEndToEnd); err != nil {
		t.Error(err)
	}
}

// EndToEndLatency: none without occurred_at, never negative.
func TestEndToEndLatency(t *testing.T) {
	t.Parallel()
	at := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		occurredAtMs int64
		want         time.Duration
		ok           bool
	}{
		{at.UnixMilli() - 1500, 1500 * time.Millisecond, true},
		{at.UnixMilli() + 3000, 0, true}, // the producer's clock ahead
		{0, 0, false},
	} {
		if d, ok := metrics.EndToEndLatency(c.occurredAtMs, at); d != c.want || ok != c.ok {
			t.Errorf("EndToEndLatency(%d) = %v, %v; want %v, %v", c.occurredAtMs, d, ok, c.want, c.ok)
		}
	}
}
