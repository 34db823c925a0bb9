// Package metrics holds the runtime's Prometheus metrics. They are
// registered on a registry the caller supplies; the runtime registers
// nothing globally. A nil *Metrics is valid and records nothing.
package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Label names of every metric.
const (
	LabelHandler   = "handler"
	LabelEventType = "event_type"
)

// Metrics are the runtime's counters and histograms:
//
//	msgcontract_processed_total        handler ran and its transaction committed
//	msgcontract_deduped_total          claim already held: skipped and acked
//	msgcontract_retried_total          failure republished for a later retry
//	msgcontract_dead_lettered_total    message moved to the dead-letter destination
//	msgcontract_key_conflicts_total    duplicate key with a different payload (producer bug), recorded
//	msgcontract_handed_back_total      the database failed (begin, claim, commit): handed back, no retry counted
//	msgcontract_handler_duration_seconds  handler run time, successful or not
type Metrics struct {
	Processed, Deduped, Retried, DeadLettered, KeyConflicts, HandedBack *prometheus.CounterVec
	HandlerDuration                                                     *prometheus.HistogramVec
}

// New creates the metrics and registers them on reg.
func New(reg prometheus.Registerer) (*Metrics, error) {
	labels := []string{LabelHandler, LabelEventType}
	counter := func(name, help string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "msgcontract", Name: name, Help: help}, labels)
	}
	m := &Metrics{
		Processed:    counter("processed_total", "Messages whose handler ran and whose transaction committed."),
		Deduped:      counter("deduped_total", "Messages skipped because their (biz_key, handler) claim already existed."),
		Retried:      counter("retried_total", "Failed messages republished for a later retry."),
		DeadLettered: counter("dead_lettered_total", "Messages moved to the dead-letter destination."),
		KeyConflicts: counter("key_conflicts_total", "Duplicates whose payload differs from the claimed message's: two messages under one key, a producer bug."),
		HandedBack:   counter("handed_back_total", "Messages handed back to the transport unprocessed because the database failed (begin, claim, savepoint or commit); they come back without counting a retry."),
		HandlerDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "msgcontract", Name: "handler_duration_seconds",
			Help:    "Handler run time, successful or not.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16),
		}, labels),
	}
	for _, c := range []prometheus.Collector{m.Processed, m.Deduped, m.Retried, m.DeadLettered, m.KeyConflicts, m.HandedBack, m.HandlerDuration} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

func inc(v *prometheus.CounterVec, handler, eventType string) {
	v.WithLabelValues(handler, eventType).Inc()
}

// IncProcessed counts a processed message.
func (m *Metrics) IncProcessed(handler, eventType string) {
	if m != nil {
		inc(m.Processed, handler, eventType)
	}
}

// IncDeduped counts a deduplicated message.
func (m *Metrics) IncDeduped(handler, eventType string) {
	if m != nil {
		inc(m.Deduped, handler, eventType)
	}
}

// IncRetried counts a retry.
func (m *Metrics) IncRetried(handler, eventType string) {
	if m != nil {
		inc(m.Retried, handler, eventType)
	}
}

// IncDeadLettered counts a dead-lettered message.
func (m *Metrics) IncDeadLettered(handler, eventType string) {
	if m != nil {
		inc(m.DeadLettered, handler, eventType)
	}
}

// IncKeyConflict counts a key conflict.
func (m *Metrics) IncKeyConflict(handler, eventType string) {
	if m != nil {
		inc(m.KeyConflicts, handler, eventType)
	}
}

// IncHandedBack counts a message handed back after a database failure.
func (m *Metrics) IncHandedBack(handler, eventType string) {
	if m != nil {
		inc(m.HandedBack, handler, eventType)
	}
}

// ObserveHandler records a handler's run time.
func (m *Metrics) ObserveHandler(handler, eventType string, d time.Duration) {
	if m != nil {
		m.HandlerDuration.WithLabelValues(handler, eventType).Observe(d.Seconds())
	}
}
