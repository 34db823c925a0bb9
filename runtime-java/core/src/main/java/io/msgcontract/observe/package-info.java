/**
 * Observers of the consumer's outcomes in the vocabulary shared with the Go and Python runtimes
 * (docs/DESIGN.md, "Observability"): {@link io.msgcontract.observe.PrometheusMetrics} (needs the
 * optional dependency {@code io.prometheus:prometheus-metrics-core}) and
 * {@link io.msgcontract.observe.JsonLog} (no dependency). Attach with
 * {@code consumer.withObserver(...)}. {@link io.msgcontract.observe.Tracing} starts the
 * OpenTelemetry spans (API only; attach with {@code consumer.withTracer(...)}, and call
 * {@code Tracing.inject} where envelopes are written to an outbox).
 */
package io.msgcontract.observe;
