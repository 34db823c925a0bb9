/**
 * Observers of the consumer's outcomes in the vocabulary shared with the Go and Python runtimes
 * (docs/DESIGN.md, "Observability"): {@link io.msgcontract.observe.PrometheusMetrics} (needs the
 * optional dependency {@code io.prometheus:prometheus-metrics-core}) and
 * {@link io.msgcontract.observe.JsonLog} (no dependency). Attach with
 * {@code consumer.withObserver(...)}.
 */
package io.msgcontract.observe;
