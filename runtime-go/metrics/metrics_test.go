package metrics_test

import (
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/msgcontract/msgcontract/runtime-go/metrics"
)

func TestNamesAndLabels(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	m, err := metrics.New(reg)
	if err != nil {
		t.Fatal(err)
	}
	m.IncProcessed("h", "E")
	m.IncDeduped("h", "E")
	m.IncRetried("h", "E")
	m.IncDeadLettered("h", "E")
	m.IncKeyConflict("h", "E")
	m.ObserveHandler("h", "E", time.Millisecond)
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range families {
		names = append(names, f.GetName())
		for _, metric := range f.GetMetric() {
			var labels []string
			for _, l := range metric.GetLabel() {
				labels = append(labels, l.GetName()+"="+l.GetValue())
			}
			if !slices.Equal(labels, []string{"event_type=E", "handler=h"}) {
				t.Errorf("%s labels = %v", f.GetName(), labels)
			}
		}
	}
	want := []string{
		"msgcontract_dead_lettered_total", "msgcontract_deduped_total", "msgcontract_handler_duration_seconds",
		"msgcontract_key_conflicts_total", "msgcontract_processed_total", "msgcontract_retried_total",
	}
	if !slices.Equal(names, want) {
		t.Errorf("metric names = %v, want %v", names, want)
	}
	// A second registration on the same registry is an error, not a panic.
	if _, err := metrics.New(reg); err == nil {
		t.Error("registering twice on one registry must fail")
	}
	// A nil *Metrics records nothing and does not panic.
	var none *metrics.Metrics
	none.IncProcessed("h", "E")
	none.ObserveHandler("h", "E", time.Second)
}
