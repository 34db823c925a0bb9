package io.msgcontract.observe;

import io.msgcontract.support.Decision;
import io.msgcontract.support.LagObserver;
import io.msgcontract.support.Observer;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.Gauge;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.model.registry.PrometheusRegistry;

/**
 * The consumer's metrics with the Prometheus Java client (1.x), named as in docs/DESIGN.md
 * ("Observability"), the same series the Go and Python runtimes expose:
 * {@code msgcontract_messages_processed_total{handler,event_type,outcome}},
 * {@code msgcontract_handler_duration_seconds}, {@code msgcontract_retry_delay_seconds} and
 * {@code msgcontract_end_to_end_latency_seconds} (classic histograms with the shared buckets); as
 * a {@link LagObserver} of the Kafka loop also
 * {@code msgcontract_consumer_lag_messages{group,topic,partition}}, registered on its first
 * report, so a service without Kafka exposes no empty gauge. {@code io.prometheus:prometheus-metrics-core} is an
 * optional dependency of the runtime: a service that uses this class adds it (and an exporter, such
 * as {@code prometheus-metrics-exporter-httpserver}).
 */
public final class PrometheusMetrics implements Observer, LagObserver {
  /**
   * Handler duration buckets: 1 ms doubling, 16 buckets, as in Go and Python (no integer edge and
   * none below 0.001, so every client writes the same le text).
   */
  static final double[] HANDLER_BUCKETS = exponential(0.001, 2, 16);

  /** Retry delay buckets in seconds, as in Go and Python. */
  static final double[] RETRY_BUCKETS = {
    0.25, 0.5, 1.5, 2.5, 4.5, 8.5, 16.5, 32.5, 64.5, 128.5, 256.5, 512.5, 1024.5, 2048.5, 4096.5};

  /**
   * End-to-end latency buckets: 1 ms (occurred_at's resolution) doubling, 22 buckets, to 2097.152
   * s, as in Go and Python.
   */
  static final double[] END_TO_END_BUCKETS = exponential(0.001, 2, 22);

  private final Counter processed;
  private final Histogram handlerDuration;
  private final Histogram retryDelay;
  private final Histogram endToEnd;
  private final PrometheusRegistry registry;
  private Gauge lag; // registered on the first report

  /**
   * Registers the metrics on registry.
   *
   * @param registry where to register, for example {@code PrometheusRegistry.defaultRegistry}
   */
  public PrometheusMetrics(PrometheusRegistry registry) {
    this.registry = registry;
    processed = Counter.builder()
        .name("msgcontract_messages_processed_total")
        .help("Deliveries that reached a final outcome: handled, deduplicated, retry_scheduled, dead_lettered or conflict.")
        .labelNames("handler", "event_type", "outcome")
        .register(registry);
    handlerDuration = Histogram.builder()
        .name("msgcontract_handler_duration_seconds")
        .help("Handler run time, successful or not.")
        .labelNames("handler", "event_type")
        .classicOnly()
        .classicUpperBounds(HANDLER_BUCKETS)
        .register(registry);
    retryDelay = Histogram.builder()
        .name("msgcontract_retry_delay_seconds")
        .help("Backoff delay of each retry scheduled.")
        .labelNames("handler", "event_type")
        .classicOnly()
        .classicUpperBounds(RETRY_BUCKETS)
        .register(registry);
    endToEnd = Histogram.builder()
        .name("msgcontract_end_to_end_latency_seconds")
        .help("Time from the envelope's occurred_at (the producer's clock) to the commit of the transaction "
            + "holding the claim and the handler's effect, per delivery handled; a retried message's backoff included.")
        .labelNames("handler", "event_type")
        .classicOnly()
        .classicUpperBounds(END_TO_END_BUCKETS)
        .register(registry);
  }

  @Override
  public void observe(Outcome o) {
    String label = o.label();
    if (label == null) {
      return;
    }
    processed.labelValues(o.handler(), o.eventType(), label).inc();
    if (!Double.isNaN(o.handlerSeconds())) {
      handlerDuration.labelValues(o.handler(), o.eventType()).observe(o.handlerSeconds());
    }
    if (o.decision() instanceof Decision.Retry r) {
      retryDelay.labelValues(o.handler(), o.eventType()).observe(r.delayMs() / 1000.0);
    }
    if (!Double.isNaN(o.endToEndSeconds())) {
      endToEnd.labelValues(o.handler(), o.eventType()).observe(o.endToEndSeconds());
    }
  }

  @Override
  public void lag(String group, String topic, int partition, long records) {
    lagGauge().labelValues(group, topic, Integer.toString(partition)).set(Math.max(records, 0));
  }

  @Override
  public void forget(String group, String topic, int partition) {
    lagGauge().remove(group, topic, Integer.toString(partition));
  }

  private synchronized Gauge lagGauge() {
    if (lag == null) {
      lag = Gauge.builder()
          .name("msgcontract_consumer_lag_messages")
          .help("Records of a partition behind its high watermark, after this consumer's last fetch.")
          .labelNames("group", "topic", "partition")
          .register(registry);
    }
    return lag;
  }

  static double[] exponential(double start, double factor, int count) {
    double[] b = new double[count];
    b[0] = start;
    for (int i = 1; i < count; i++) {
      b[i] = b[i - 1] * factor; // as Go's ExponentialBuckets computes them
    }
    return b;
  }
}
