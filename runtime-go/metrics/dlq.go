package metrics

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/msgcontract/msgcontract/runtime-go/dlq"
)

// DLQScanLimit caps how many dead-letter records one scrape reads: a
// dead-letter destination that large already wants a human, and a scrape
// must stay cheap.
const DLQScanLimit = 100_000

// NewDLQCollector returns a collector of msgcontract_dlq_messages{topic,
// group}: the store's dead-letter records not replayed, counted when
// Prometheus scrapes (at most DLQScanLimit records, within timeout). A
// store that fails to answer reports an invalid metric, so the scrape
// shows the error instead of a stale size.
func NewDLQCollector(store dlq.Store, timeout time.Duration) prometheus.Collector {
	return &dlqCollector{store: store, timeout: timeout,
		desc: prometheus.NewDesc(NameDLQMessages, "Dead-letter records not replayed, read from the store at scrape time.",
			[]string{"topic", "group"}, nil)}
}

type dlqCollector struct {
	store   dlq.Store
	timeout time.Duration
	desc    *prometheus.Desc
}

func (c *dlqCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *dlqCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	recs, err := c.store.List(ctx, dlq.Filter{ExcludeReplayed: true, Limit: DLQScanLimit})
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.desc, err)
		return
	}
	type key struct{ topic, group string }
	counts := map[key]int{}
	for _, r := range recs {
		counts[key{r.Topic, r.Group}]++
	}
	for k, n := range counts {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(n), k.topic, k.group)
	}
}
