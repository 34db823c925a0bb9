package io.msgcontract.micrometer;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.msgcontract.support.Decision;
import io.msgcontract.support.LagObserver;
import io.msgcontract.support.Observer;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The consumer's metrics as Micrometer meters on a {@link MeterRegistry}: what
 * {@code io.msgcontract.observe.PrometheusMetrics} of msgcontract-runtime records with the
 * Prometheus client, for services (Spring Boot ones, for instance) whose metrics go through
 * Micrometer. Pass it to {@code consumer.withObserver(metrics)} and, for the Kafka loop, as its
 * {@link LagObserver}.
 *
 * <p>The meters, with their Micrometer names and the names Micrometer's Prometheus registry
 * ({@code micrometer-registry-prometheus}, default naming convention) gives them, which are the
 * series of docs/DESIGN.md ("Observability") that the Go and Python runtimes expose, with the same
 * label names and values and the same {@code le} edges:
 *
 * <ul>
 *   <li>counter {@code msgcontract.messages.processed}, tags handler, event_type, outcome:
 *       {@code msgcontract_messages_processed_total{handler,event_type,outcome}};
 *   <li>timer {@code msgcontract.handler.duration}, tags handler, event_type, service level
 *       objectives 1 ms doubling to 32.768 s (16 edges) and no percentile histogram:
 *       {@code msgcontract_handler_duration_seconds} (a classic histogram);
 *   <li>distribution summary {@code msgcontract.retry.delay}, base unit seconds, tags handler,
 *       event_type, service level objectives {@link #RETRY_BUCKETS}:
 *       {@code msgcontract_retry_delay_seconds} (a classic histogram);
 *   <li>timer {@code msgcontract.end_to_end.latency}, tags handler, event_type, service level
 *       objectives 1 ms doubling to 2097.152 s (22 edges) and no percentile histogram, recorded
 *       for handled deliveries ({@link Observer.Outcome#endToEndSeconds()}):
 *       {@code msgcontract_end_to_end_latency_seconds} (a classic histogram);
 *   <li>gauge {@code msgcontract.consumer.lag}, base unit messages, tags group, topic, partition:
 *       {@code msgcontract_consumer_lag_messages{group,topic,partition}}, registered on a
 *       partition's first report and removed by {@link #forget}.
 * </ul>
 *
 * <p>A deferred delivery (no final outcome, {@link Observer.Outcome#label()} null) is not counted.
 * Meters are registered on their label set's first use, as the Prometheus client creates a
 * series, so no empty series appears (no duration series for a delivery whose handler did not
 * run).
 *
 * <p><b>Extra series.</b> Micrometer's Prometheus registry also writes, for every timer and
 * distribution summary, a gauge of the largest value recorded in a decaying window (the
 * distribution statistic expiry, 2 minutes by default): here
 * {@code msgcontract_handler_duration_seconds_max{handler,event_type}},
 * {@code msgcontract_retry_delay_seconds_max{handler,event_type}} and
 * {@code msgcontract_end_to_end_latency_seconds_max{handler,event_type}}. No Micrometer 1.16 setting
 * turns them off (its registry adds them unconditionally); a scrape that must match the Go runtime
 * exactly drops them with the registry's {@code scrape(contentType, includedNames)} or Prometheus'
 * {@code metric_relabel_configs}. There are no others: the counter and the gauge are written as
 * they are, and neither the Prometheus text format nor OpenMetrics writes a {@code _created}
 * series (the Prometheus client's default, as for core's PrometheusMetrics).
 *
 * <p>The names above hold under Micrometer's default conventions. A {@code MeterFilter} that
 * renames these meters, adds common tags or turns on percentile histograms or other service level
 * objectives for them (Spring Boot's {@code management.metrics.distribution.*} and
 * {@code management.metrics.tags.*}) changes the series accordingly.
 */
public final class MicrometerMetrics implements Observer, LagObserver {
  /** Micrometer name of the deliveries counter ({@code msgcontract_messages_processed_total}). */
  public static final String PROCESSED = "msgcontract.messages.processed";
  /** Micrometer name of the handler timer ({@code msgcontract_handler_duration_seconds}). */
  public static final String HANDLER_DURATION = "msgcontract.handler.duration";
  /** Micrometer name of the retry delay summary ({@code msgcontract_retry_delay_seconds}). */
  public static final String RETRY_DELAY = "msgcontract.retry.delay";
  /** Micrometer name of the end-to-end timer ({@code msgcontract_end_to_end_latency_seconds}). */
  public static final String END_TO_END = "msgcontract.end_to_end.latency";
  /** Micrometer name of the lag gauge ({@code msgcontract_consumer_lag_messages}). */
  public static final String CONSUMER_LAG = "msgcontract.consumer.lag";

  /**
   * Handler duration bucket edges: 1 ms doubling, 16 edges, as the Go runtime's
   * {@code prometheus.ExponentialBuckets(0.001, 2, 16)}; whole milliseconds, so exact.
   */
  static final Duration[] HANDLER_BUCKETS = doublingMillis(16);

  /**
   * End-to-end latency bucket edges: 1 ms doubling, 22 edges, as the Go runtime's
   * {@code prometheus.ExponentialBuckets(0.001, 2, 22)}.
   */
  static final Duration[] END_TO_END_BUCKETS = doublingMillis(22);

  /** Retry delay bucket edges in seconds, as in Go, Python and core's PrometheusMetrics. */
  static final double[] RETRY_BUCKETS = {
    0.25, 0.5, 1.5, 2.5, 4.5, 8.5, 16.5, 32.5, 64.5, 128.5, 256.5, 512.5, 1024.5, 2048.5, 4096.5};

  private final MeterRegistry registry;
  /** The meters of one (handler, event_type), looked up once per delivery. */
  private final Map<HandlerKey, HandlerMeters> handlers = new ConcurrentHashMap<>();
  /** One value and gauge per reported partition; registration and removal under its lock. */
  private final Map<LagKey, Lag> lags = new ConcurrentHashMap<>();

  /**
   * Records on registry; meters are registered on first use.
   *
   * @param registry where to register, for example Spring Boot's {@code MeterRegistry} bean
   */
  public MicrometerMetrics(MeterRegistry registry) {
    if (registry == null) {
      throw new IllegalArgumentException("registry is null");
    }
    this.registry = registry;
  }

  @Override
  public void observe(Outcome o) {
    String label = o.label();
    if (label == null) {
      return; // deferred: not final yet
    }
    HandlerKey key = new HandlerKey(o.handler(), o.eventType());
    HandlerMeters m = handlers.get(key);
    if (m == null) {
      m = handlers.computeIfAbsent(key, HandlerMeters::new);
    }
    m.processed(label).increment();
    if (!Double.isNaN(o.handlerSeconds())) {
      m.duration().record(Math.round(o.handlerSeconds() * 1e9), TimeUnit.NANOSECONDS);
    }
    if (o.decision() instanceof Decision.Retry r) {
      m.retryDelay().record(r.delayMs() / 1000.0);
    }
    if (!Double.isNaN(o.endToEndSeconds())) {
      m.endToEnd().record(Math.round(o.endToEndSeconds() * 1e9), TimeUnit.NANOSECONDS);
    }
  }

  @Override
  public void lag(String group, String topic, int partition, long records) {
    long value = Math.max(records, 0);
    LagKey key = new LagKey(group, topic, partition);
    Lag l = lags.get(key);
    if (l == null) {
      synchronized (lags) {
        l = lags.get(key);
        if (l == null) {
          AtomicLong ref = new AtomicLong(value);
          Gauge g = Gauge.builder(CONSUMER_LAG, ref, AtomicLong::get)
              .description("Records of a partition behind its high watermark, after this consumer's last fetch.")
              .baseUnit("messages")
              .tags("group", group, "topic", topic, "partition", Integer.toString(partition))
              .strongReference(true)
              .register(registry);
          lags.put(key, new Lag(ref, g));
          return;
        }
      }
    }
    l.value().set(value);
  }

  @Override
  public void forget(String group, String topic, int partition) {
    synchronized (lags) {
      Lag l = lags.remove(new LagKey(group, topic, partition));
      if (l != null) {
        registry.remove(l.gauge());
      }
    }
  }

  private static Duration[] doublingMillis(int count) {
    Duration[] b = new Duration[count];
    for (int i = 0; i < b.length; i++) {
      b[i] = Duration.ofMillis(1L << i);
    }
    return b;
  }

  private record HandlerKey(String handler, String eventType) { }

  private record LagKey(String group, String topic, int partition) { }

  private record Lag(AtomicLong value, Gauge gauge) { }

  /**
   * The meters of one (handler, event_type). Each is registered on first use; a race registers the
   * same meter twice, which Micrometer answers with the meter already registered.
   */
  private final class HandlerMeters {
    private final HandlerKey key;
    private final Map<String, Counter> processed = new ConcurrentHashMap<>(4);
    private volatile Timer duration;
    private volatile DistributionSummary retryDelay;
    private volatile Timer endToEnd;

    HandlerMeters(HandlerKey key) {
      this.key = key;
    }

    Counter processed(String outcome) {
      Counter c = processed.get(outcome);
      if (c == null) {
        c = processed.computeIfAbsent(outcome, out -> Counter.builder(PROCESSED)
            .description("Deliveries that reached a final outcome: handled, deduplicated, retry_scheduled, dead_lettered or conflict.")
            .tags("handler", key.handler(), "event_type", key.eventType(), "outcome", out)
            .register(registry));
      }
      return c;
    }

    Timer duration() {
      Timer t = duration;
      if (t == null) {
        t = timer(HANDLER_DURATION, "Handler run time, successful or not.", HANDLER_BUCKETS);
        duration = t;
      }
      return t;
    }

    DistributionSummary retryDelay() {
      DistributionSummary s = retryDelay;
      if (s == null) {
        s = DistributionSummary.builder(RETRY_DELAY)
            .description("Backoff delay of each retry scheduled.")
            .baseUnit("seconds")
            .tags("handler", key.handler(), "event_type", key.eventType())
            .serviceLevelObjectives(RETRY_BUCKETS)
            .publishPercentileHistogram(false)
            .register(registry);
        retryDelay = s;
      }
      return s;
    }

    Timer endToEnd() {
      Timer t = endToEnd;
      if (t == null) {
        t = timer(END_TO_END, "Time from the envelope's occurred_at (the producer's clock) to the commit of the "
            + "transaction holding the claim and the handler's effect, per delivery handled; a retried message's "
            + "backoff included.", END_TO_END_BUCKETS);
        endToEnd = t;
      }
      return t;
    }

    /** A timer of this label set with edges as its service level objectives and no percentile histogram. */
    private Timer timer(String name, String description, Duration[] edges) {
      return Timer.builder(name)
          .description(description)
          .tags("handler", key.handler(), "event_type", key.eventType())
          .serviceLevelObjectives(edges)
          .publishPercentileHistogram(false)
          .register(registry);
    }
  }
}
