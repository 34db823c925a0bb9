// Package metrics holds the runtime's Prometheus metrics, named as in
// docs/DESIGN.md ("Observability"), the vocabulary the Java and Python
// runtimes, the alert rules and the dashboard in ops/ share. They are
// registered on a registry the caller supplies; the runtime registers
// nothing globally. A nil *Prometheus is valid and records nothing.
package metrics

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Label names.
const (
	LabelHandler   = "handler"
	LabelEventType = "event_type"
	LabelOutcome   = "outcome"
)

// Outcomes: the values of the outcome label, disjoint, one per delivery
// that reached a final outcome.
const (
	OutcomeHandled        = "handled"
	OutcomeDeduplicated   = "deduplicated"
	OutcomeRetryScheduled = "retry_scheduled"
	OutcomeDeadLettered   = "dead_lettered"
	OutcomeConflict       = "conflict"
)

// Metric names.
const (
	NameProcessed       = "msgcontract_messages_processed_total"
	NameHandedBack      = "msgcontract_messages_handed_back_total"
	NameHandlerDuration = "msgcontract_handler_duration_seconds"
	NameRetryDelay      = "msgcontract_retry_delay_seconds"
	NameEndToEnd        = "msgcontract_end_to_end_latency_seconds"
	NameDLQMessages     = "msgcontract_dlq_messages"
	NameConsumerLag     = "msgcontract_consumer_lag_messages"
)

// Buckets shared with the Java and Python runtimes. No edge is an integer
// or below 0.001: there the three Prometheus clients write le differently
// ("1" / "1.0", "0.0005" / "5.0E-4"), Prometheus 2 keeps le as written, and
// sum by (le) across languages would split buckets. Retry edges sit half a
// second above the exponential delays contracts produce (1, 2, 4 ... s).
// End-to-end latency starts at 1 ms, occurred_at's resolution, and
// doubles to about 35 minutes: a retried message's backoff is part of it.
var (
	HandlerDurationBuckets = prometheus.ExponentialBuckets(0.001, 2, 16)
	RetryDelayBuckets      = []float64{0.25, 0.5, 1.5, 2.5, 4.5, 8.5, 16.5, 32.5, 64.5, 128.5, 256.5, 512.5, 1024.5, 2048.5, 4096.5}
	EndToEndBuckets        = prometheus.ExponentialBuckets(0.001, 2, 22)
)

// EndToEndHelp is the end-to-end histogram's help text, the same in Java
// and Python.
const EndToEndHelp = "Time from the envelope's occurred_at (the producer's clock) to the commit of the transaction " +
	"holding the claim and the handler's effect, per delivery handled; a retried message's backoff included."

// Prometheus holds the runtime's counters and histograms:
//
//	msgcontract_messages_processed_total{outcome}  one per delivery with a final outcome
//	msgcontract_messages_handed_back_total         the database failed (begin, claim, commit): handed back, no retry counted
//	msgcontract_handler_duration_seconds           handler run time, successful or not
//	msgcontract_retry_delay_seconds                backoff delay of each retry scheduled
//	msgcontract_end_to_end_latency_seconds         envelope occurred_at to the commit of a handled delivery
//
// Processed, Deduped, Retried, DeadLettered and KeyConflicts are
// msgcontract_messages_processed_total curried with their outcome; each
// takes the handler and event type labels.
type Prometheus struct {
	Messages                                                *prometheus.CounterVec
	Processed, Deduped, Retried, DeadLettered, KeyConflicts *prometheus.CounterVec
	HandedBack                                              *prometheus.CounterVec
	HandlerDuration, RetryDelay, EndToEnd                   *prometheus.HistogramVec
}

// New creates the metrics and registers them on reg.
func New(reg prometheus.Registerer) (*Prometheus, error) {
	labels := []string{LabelHandler, LabelEventType}
	m := &Prometheus{
		Messages: prometheus.NewCounterVec(prometheus.CounterOpts{Name: NameProcessed,
			Help: "Deliveries that reached a final outcome: handled, deduplicated, retry_scheduled, dead_lettered or conflict."},
			[]string{LabelHandler, LabelEventType, LabelOutcome}),
		HandedBack: prometheus.NewCounterVec(prometheus.CounterOpts{Name: NameHandedBack,
			Help: "Messages handed back to the transport unprocessed because the database failed (begin, claim, savepoint or commit); they come back without counting a retry."},
			labels),
		HandlerDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: NameHandlerDuration,
			Help: "Handler run time, successful or not.", Buckets: HandlerDurationBuckets}, labels),
		RetryDelay: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: NameRetryDelay,
			Help: "Backoff delay of each retry scheduled.", Buckets: RetryDelayBuckets}, labels),
		EndToEnd: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: NameEndToEnd,
			Help: EndToEndHelp, Buckets: EndToEndBuckets}, labels),
	}
	outcome := func(o string) *prometheus.CounterVec {
		return m.Messages.MustCurryWith(prometheus.Labels{LabelOutcome: o})
	}
	m.Processed, m.Deduped, m.Retried = outcome(OutcomeHandled), outcome(OutcomeDeduplicated), outcome(OutcomeRetryScheduled)
	m.DeadLettered, m.KeyConflicts = outcome(OutcomeDeadLettered), outcome(OutcomeConflict)
	for _, c := range []prometheus.Collector{m.Messages, m.HandedBack, m.HandlerDuration, m.RetryDelay, m.EndToEnd} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// Inc counts a delivery's final outcome (one of the Outcome constants).
func (m *Prometheus) Inc(handler, eventType, outcome string) {
	if m != nil {
		m.Messages.WithLabelValues(handler, eventType, outcome).Inc()
	}
}

// IncHandedBack counts a message handed back after a database failure.
func (m *Prometheus) IncHandedBack(handler, eventType string) {
	if m != nil {
		m.HandedBack.WithLabelValues(handler, eventType).Inc()
	}
}

// ObserveHandler records a handler's run time.
func (m *Prometheus) ObserveHandler(handler, eventType string, d time.Duration) {
	if m != nil {
		m.HandlerDuration.WithLabelValues(handler, eventType).Observe(d.Seconds())
	}
}

// ObserveRetryDelay records the backoff delay of a retry scheduled.
func (m *Prometheus) ObserveRetryDelay(handler, eventType string, d time.Duration) {
	if m != nil {
		m.RetryDelay.WithLabelValues(handler, eventType).Observe(d.Seconds())
	}
}

// ObserveEndToEnd records the time from a handled delivery's occurred_at
// to its commit (EndToEndLatency computes it).
func (m *Prometheus) ObserveEndToEnd(handler, eventType string, d time.Duration) {
	if m != nil {
		m.EndToEnd.WithLabelValues(handler, eventType).Observe(d.Seconds())
	}
}

// EndToEndLatency is the time from occurredAtMs, an envelope's occurred_at
// (UTC epoch milliseconds), to committed; ok is false when the envelope has
// none (0). A producer clock ahead of the consumer's gives 0, not a
// negative value, which would lower the histogram's _sum and read as a
// counter reset to rate().
func EndToEndLatency(occurredAtMs int64, committed time.Time) (d time.Duration, ok bool) {
	if occurredAtMs <= 0 {
		return 0, false
	}
	return max(committed.Sub(time.UnixMilli(occurredAtMs)), 0), true
}

// Route is the per-message series of one handler and event type, each
// resolved on its first use and kept: WithLabelValues hashes the label
// values and takes a lock on every call, which a consumer pays two or
// three times a message otherwise. A series appears when first used, as with Inc. A nil
// *Route (from a nil *Prometheus) records nothing.
type Route struct {
	m                  *Prometheus
	handler, eventType string
	handled, deduped   lazy[prometheus.Counter]
	duration, endToEnd lazy[prometheus.Observer]
}

type lazy[T any] struct {
	once sync.Once
	v    T
}

func (l *lazy[T]) get(resolve func() T) T {
	l.once.Do(func() { l.v = resolve() })
	return l.v
}

// Route returns handler's and eventType's series.
func (m *Prometheus) Route(handler, eventType string) *Route {
	if m == nil {
		return nil
	}
	return &Route{m: m, handler: handler, eventType: eventType}
}

// Inc is Prometheus.Inc for the route.
func (r *Route) Inc(outcome string) {
	if r == nil {
		return
	}
	var l *lazy[prometheus.Counter]
	switch outcome {
	case OutcomeHandled:
		l = &r.handled
	case OutcomeDeduplicated:
		l = &r.deduped
	default:
		r.m.Inc(r.handler, r.eventType, outcome)
		return
	}
	l.get(func() prometheus.Counter { return r.m.Messages.WithLabelValues(r.handler, r.eventType, outcome) }).Inc()
}

// ObserveHandler is Prometheus.ObserveHandler for the route.
func (r *Route) ObserveHandler(d time.Duration) {
	if r != nil {
		r.observe(&r.duration, r.m.HandlerDuration, d)
	}
}

// ObserveEndToEnd is Prometheus.ObserveEndToEnd for the route.
func (r *Route) ObserveEndToEnd(d time.Duration) {
	if r != nil {
		r.observe(&r.endToEnd, r.m.EndToEnd, d)
	}
}

// observe records d in the route's series of vec, kept in l.
func (r *Route) observe(l *lazy[prometheus.Observer], vec *prometheus.HistogramVec, d time.Duration) {
	l.get(func() prometheus.Observer { return vec.WithLabelValues(r.handler, r.eventType) }).Observe(d.Seconds())
}

// ObserveRetryDelay is Prometheus.ObserveRetryDelay for the route.
func (r *Route) ObserveRetryDelay(d time.Duration) {
	if r != nil {
		r.m.ObserveRetryDelay(r.handler, r.eventType, d)
	}
}

// IncHandedBack is Prometheus.IncHandedBack for the route.
func (r *Route) IncHandedBack() {
	if r != nil {
		r.m.IncHandedBack(r.handler, r.eventType)
	}
}
