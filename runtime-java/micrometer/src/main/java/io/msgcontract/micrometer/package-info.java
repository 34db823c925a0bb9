/**
 * The consumer's metrics as Micrometer meters: {@link io.msgcontract.micrometer.MicrometerMetrics},
 * an {@link io.msgcontract.support.Observer} and {@link io.msgcontract.support.LagObserver} whose
 * meters Micrometer's Prometheus registry exposes as the series of docs/DESIGN.md
 * ("Observability") that the Go and Python runtimes and core's
 * {@code io.msgcontract.observe.PrometheusMetrics} expose, plus Micrometer's {@code _max} gauges.
 */
package io.msgcontract.micrometer;
