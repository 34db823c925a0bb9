package io.msgcontract.micrometer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.Counter;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.msgcontract.observe.PrometheusMetrics;
import io.msgcontract.support.Decision;
import io.msgcontract.support.LagObserver;
import io.msgcontract.support.Observer;
import io.msgcontract.support.Observer.Outcome;
import io.msgcontract.v1.Envelope;
import io.prometheus.metrics.expositionformats.OpenMetricsTextFormatWriter;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * MicrometerMetrics exported by micrometer-registry-prometheus: the series of docs/DESIGN.md
 * ("Observability"), family by family the text core's PrometheusMetrics writes for the same
 * outcomes, plus the documented {@code _max} gauges.
 */
class MicrometerMetricsTest {
  /**
   * The le values runtime-go/metrics writes: HandlerDurationBuckets =
   * prometheus.ExponentialBuckets(0.001, 2, 16), then +Inf.
   */
  static final List<String> GO_HANDLER_LE = List.of(
      "0.001", "0.002", "0.004", "0.008", "0.016", "0.032", "0.064", "0.128", "0.256", "0.512",
      "1.024", "2.048", "4.096", "8.192", "16.384", "32.768", "+Inf");

  /** runtime-go/metrics' RetryDelayBuckets, then +Inf. */
  static final List<String> GO_RETRY_LE = List.of(
      "0.25", "0.5", "1.5", "2.5", "4.5", "8.5", "16.5", "32.5", "64.5", "128.5", "256.5", "512.5",
      "1024.5", "2048.5", "4096.5", "+Inf");

  /** runtime-go/metrics' EndToEndBuckets = prometheus.ExponentialBuckets(0.001, 2, 22), then +Inf. */
  static final List<String> GO_END_TO_END_LE = List.of(
      "0.001", "0.002", "0.004", "0.008", "0.016", "0.032", "0.064", "0.128", "0.256", "0.512",
      "1.024", "2.048", "4.096", "8.192", "16.384", "32.768", "65.536", "131.072", "262.144", "524.288",
      "1048.576", "2097.152", "+Inf");

  /** What Micrometer's Prometheus registry adds to the shared series (MicrometerMetrics' Javadoc). */
  static final Set<String> MICROMETER_EXTRAS = Set.of(
      "msgcontract_handler_duration_seconds_max", "msgcontract_retry_delay_seconds_max",
      "msgcontract_end_to_end_latency_seconds_max");

  /** Handled in 3 ms, committed 1.5 s after the event occurred. */
  static final Outcome HANDLED = new Outcome("billing", "orders", "ORDER_PLACED", null, new Decision.Ack(false), 0.003, 1.5);
  static final Outcome DEDUPLICATED = new Outcome("billing", "orders", "ORDER_PLACED", null, new Decision.Ack(true), Double.NaN);
  static final Outcome RETRY = new Outcome("billing", "orders", "ORDER_PLACED", null,
      new Decision.Retry(Envelope.getDefaultInstance(), 1000), 0.5);
  static final Outcome DEAD = new Outcome("billing", "orders", "ORDER_PLACED", null,
      new Decision.DeadLetter("retries_exhausted", 50301, "ledger down", 5), 0.0015);
  /** A body that did not decode: no handler ran, empty handler and event type. */
  static final Outcome UNDECODED = new Outcome("", "orders", "", null,
      new Decision.DeadLetter("decode", -3, "not an envelope", 1), Double.NaN);
  static final Outcome DEFERRED = new Outcome("billing", "orders", "ORDER_PLACED", null, new Decision.Defer(60_000), Double.NaN);
  /** A second label set, a long handler and a long retry (past the last finite edges). */
  static final Outcome SLOW_RETRY = new Outcome("shipping", "orders", "ORDER_SHIPPED", null,
      new Decision.Retry(Envelope.getDefaultInstance(), 5_000_000), 40.0);

  /** The same deliveries and lag reports, fed to either implementation. */
  static <T extends Observer & LagObserver> void scenario(T m) {
    for (Outcome o : List.of(HANDLED, DEDUPLICATED, RETRY, DEAD, UNDECODED, DEFERRED, SLOW_RETRY, HANDLED)) {
      m.observe(o);
    }
    m.lag("billing", "ns.orders", 2, 15);
    m.lag("billing", "ns.orders", 0, -1); // never negative
    m.lag("billing", "ns.orders.retry.billing", 1, 7);
    m.lag("billing", "ns.orders.retry.billing", 1, 3); // the latest report wins
    m.forget("billing", "ns.orders", 2);
  }

  @Test
  void everyFamilyIsCorePrometheusMetricsExceptTheMaxGauges() throws IOException {
    PrometheusMeterRegistry mm = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    scenario(new MicrometerMetrics(mm));
    PrometheusRegistry pr = new PrometheusRegistry();
    scenario(new PrometheusMetrics(pr));

    Map<String, Set<String>> micrometer = families(mm.scrape());
    Map<String, Set<String>> core = families(text(pr));
    assertEquals(Set.of("msgcontract_messages_processed_total", "msgcontract_handler_duration_seconds",
        "msgcontract_retry_delay_seconds", "msgcontract_end_to_end_latency_seconds", "msgcontract_consumer_lag_messages"),
        core.keySet(), core.toString());
    Set<String> extras = new TreeSet<>(micrometer.keySet());
    extras.removeAll(core.keySet());
    assertEquals(new TreeSet<>(MICROMETER_EXTRAS), extras, mm.scrape());
    for (String family : core.keySet()) {
      assertEquals(core.get(family), micrometer.get(family), family); // HELP, TYPE and every sample line
    }
  }

  @Test
  void openMetricsScrapeMatchesCorePrometheusMetricsToo() throws IOException {
    PrometheusMeterRegistry mm = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    scenario(new MicrometerMetrics(mm));
    PrometheusRegistry pr = new PrometheusRegistry();
    scenario(new PrometheusMetrics(pr));
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    OpenMetricsTextFormatWriter.create().write(out, pr.scrape());

    String text = mm.scrape(OpenMetricsTextFormatWriter.CONTENT_TYPE);
    assertTrue(text.endsWith("# EOF\n"), text);
    Map<String, Set<String>> micrometer = families(text);
    Map<String, Set<String>> core = families(out.toString(StandardCharsets.UTF_8));
    // OpenMetrics names the counter's family without _total; its sample keeps it
    assertEquals(Set.of("msgcontract_messages_processed", "msgcontract_handler_duration_seconds",
        "msgcontract_retry_delay_seconds", "msgcontract_end_to_end_latency_seconds", "msgcontract_consumer_lag_messages"),
        core.keySet(), core.toString());
    Set<String> extras = new TreeSet<>(micrometer.keySet());
    extras.removeAll(core.keySet());
    assertEquals(new TreeSet<>(MICROMETER_EXTRAS), extras, text);
    for (String family : core.keySet()) {
      assertEquals(core.get(family), micrometer.get(family), family);
    }
    assertFalse(text.contains("_created"), text);
  }

  @Test
  void handlerDurationHasGosBucketEdges() {
    PrometheusMeterRegistry mm = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    MicrometerMetrics m = new MicrometerMetrics(mm);
    m.observe(HANDLED); // 3 ms
    m.observe(DEAD); // 1.5 ms
    String text = mm.scrape();
    String series = "msgcontract_handler_duration_seconds_bucket{event_type=\"ORDER_PLACED\",handler=\"billing\",";
    assertEquals(GO_HANDLER_LE, le(text, series), text);
    assertEquals(List.of(0L, 1L, 2L, 2L), counts(text, series).subList(0, 4), text); // 0.001, 0.002, 0.004, 0.008
    assertEquals(2L, counts(text, series).get(GO_HANDLER_LE.size() - 1), text); // +Inf
    assertTrue(text.contains("# TYPE msgcontract_handler_duration_seconds histogram"), text);
    assertTrue(text.contains("msgcontract_handler_duration_seconds_count{event_type=\"ORDER_PLACED\",handler=\"billing\"} 2"), text);
  }

  @Test
  void retryDelayHasGosBucketEdgesAndCountsOnlyRetries() {
    PrometheusMeterRegistry mm = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    MicrometerMetrics m = new MicrometerMetrics(mm);
    m.observe(HANDLED);
    m.observe(RETRY); // 1 s
    m.observe(SLOW_RETRY); // 5000 s, past 4096.5
    String text = mm.scrape();
    String billing = "msgcontract_retry_delay_seconds_bucket{event_type=\"ORDER_PLACED\",handler=\"billing\",";
    assertEquals(GO_RETRY_LE, le(text, billing), text);
    assertEquals(List.of(0L, 0L, 1L), counts(text, billing).subList(0, 3), text); // 0.25, 0.5, 1.5
    String shipping = "msgcontract_retry_delay_seconds_bucket{event_type=\"ORDER_SHIPPED\",handler=\"shipping\",";
    assertEquals(GO_RETRY_LE, le(text, shipping), text);
    List<Long> c = counts(text, shipping);
    assertEquals(0L, c.get(GO_RETRY_LE.size() - 2), text); // 4096.5
    assertEquals(1L, c.get(GO_RETRY_LE.size() - 1), text); // +Inf
    assertTrue(text.contains("msgcontract_retry_delay_seconds_count{event_type=\"ORDER_PLACED\",handler=\"billing\"} 1"), text);
    assertTrue(text.contains("msgcontract_retry_delay_seconds_sum{event_type=\"ORDER_PLACED\",handler=\"billing\"} 1.0"), text);
  }

  @Test
  void endToEndLatencyHasGosBucketEdgesAndCountsOnlyHandledDeliveries() {
    PrometheusMeterRegistry mm = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    MicrometerMetrics m = new MicrometerMetrics(mm);
    for (Outcome o : List.of(HANDLED, DEDUPLICATED, RETRY, DEAD, UNDECODED, DEFERRED)) {
      m.observe(o); // 1.5 s, the handled one's alone
    }
    m.observe(new Outcome("billing", "orders", "ORDER_PLACED", null, new Decision.Ack(false), 0.003, 0.0));
    String text = mm.scrape();
    String series = "msgcontract_end_to_end_latency_seconds_bucket{event_type=\"ORDER_PLACED\",handler=\"billing\",";
    assertEquals(GO_END_TO_END_LE, le(text, series), text);
    List<Long> c = counts(text, series);
    assertEquals(List.of(1L, 1L), c.subList(0, 2), text); // 0.001, 0.002: the one at 0
    assertEquals(List.of(1L, 2L), c.subList(10, 12), text); // 1.024, 2.048: and 1.5 s
    assertEquals(2L, c.get(GO_END_TO_END_LE.size() - 1), text); // +Inf
    assertTrue(text.contains("# TYPE msgcontract_end_to_end_latency_seconds histogram"), text);
    assertTrue(text.contains("msgcontract_end_to_end_latency_seconds_count{event_type=\"ORDER_PLACED\",handler=\"billing\"} 2"), text);
    assertFalse(text.contains("msgcontract_end_to_end_latency_seconds_count{event_type=\"\""), text);
  }

  @Test
  void eachFinalOutcomeCountsOnceAndDeferredNotAtAll() {
    PrometheusMeterRegistry mm = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    MicrometerMetrics m = new MicrometerMetrics(mm);
    m.observe(DEFERRED);
    assertEquals("", mm.scrape()); // nothing final yet: no series at all
    for (Outcome o : List.of(HANDLED, DEDUPLICATED, RETRY, DEAD, UNDECODED, DEFERRED)) {
      m.observe(o);
    }
    String text = mm.scrape();
    Set<String> processed = new TreeSet<>();
    for (String l : text.split("\n")) {
      if (l.startsWith("msgcontract_messages_processed_total{")) {
        processed.add(l);
      }
    }
    assertEquals(new TreeSet<>(List.of(
        "msgcontract_messages_processed_total{event_type=\"ORDER_PLACED\",handler=\"billing\",outcome=\"handled\"} 1.0",
        "msgcontract_messages_processed_total{event_type=\"ORDER_PLACED\",handler=\"billing\",outcome=\"deduplicated\"} 1.0",
        "msgcontract_messages_processed_total{event_type=\"ORDER_PLACED\",handler=\"billing\",outcome=\"retry_scheduled\"} 1.0",
        "msgcontract_messages_processed_total{event_type=\"ORDER_PLACED\",handler=\"billing\",outcome=\"dead_lettered\"} 1.0",
        "msgcontract_messages_processed_total{event_type=\"\",handler=\"\",outcome=\"dead_lettered\"} 1.0")),
        processed, text);
    assertTrue(text.contains("# TYPE msgcontract_messages_processed_total counter"), text);
    // the undecoded body ran no handler: no duration or retry series for its label set
    assertFalse(text.contains("handler=\"\",le="), text);
    assertFalse(text.contains("msgcontract_handler_duration_seconds_count{event_type=\"\""), text);
  }

  @Test
  void lagGaugeIsRegisteredOnFirstReportAndRemovedByForget() {
    PrometheusMeterRegistry mm = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    MicrometerMetrics m = new MicrometerMetrics(mm);
    m.forget("billing", "ns.orders", 9); // never reported: nothing to remove, nothing registered
    assertEquals("", mm.scrape());
    m.lag("billing", "ns.orders", 2, 15);
    m.lag("billing", "ns.orders", 0, -1);
    String text = mm.scrape();
    assertTrue(text.contains("# TYPE msgcontract_consumer_lag_messages gauge"), text);
    assertTrue(text.contains("msgcontract_consumer_lag_messages{group=\"billing\",partition=\"2\",topic=\"ns.orders\"} 15.0"), text);
    assertTrue(text.contains("msgcontract_consumer_lag_messages{group=\"billing\",partition=\"0\",topic=\"ns.orders\"} 0.0"), text);
    m.lag("billing", "ns.orders", 2, 4);
    assertTrue(mm.scrape().contains("partition=\"2\",topic=\"ns.orders\"} 4.0"), mm.scrape());
    m.forget("billing", "ns.orders", 2);
    text = mm.scrape();
    assertFalse(text.contains("partition=\"2\""), text);
    assertEquals(1, mm.find(MicrometerMetrics.CONSUMER_LAG).gauges().size());
    // reassigned later: registered again, with the new value
    m.lag("billing", "ns.orders", 2, 8);
    assertTrue(mm.scrape().contains("partition=\"2\",topic=\"ns.orders\"} 8.0"), mm.scrape());
    m.forget("billing", "ns.orders", 0);
    m.forget("billing", "ns.orders", 2);
    assertEquals("", mm.scrape());
  }

  @Test
  void metersAreRegisteredOncePerLabelSet() {
    // (a SimpleMeterRegistry would add a gauge per service level objective)
    PrometheusMeterRegistry reg = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    MicrometerMetrics m = new MicrometerMetrics(reg);
    for (int i = 0; i < 1000; i++) {
      m.observe(HANDLED);
      m.observe(RETRY);
    }
    // handled and retry_scheduled counters, two timers (handler, end to end), one summary
    assertEquals(5, reg.getMeters().size(), reg.scrape());
    Counter handled = reg.get(MicrometerMetrics.PROCESSED).tag("outcome", "handled").counter();
    assertEquals(1000.0, handled.count());
    assertEquals(2000, reg.get(MicrometerMetrics.HANDLER_DURATION).timer().count());
    assertEquals(1000, reg.get(MicrometerMetrics.RETRY_DELAY).summary().count());
    assertEquals(1000, reg.get(MicrometerMetrics.END_TO_END).timer().count());
    assertEquals(1000.0, reg.get(MicrometerMetrics.RETRY_DELAY).summary().totalAmount());
    m.observe(HANDLED);
    assertSame(handled, reg.get(MicrometerMetrics.PROCESSED).tag("outcome", "handled").counter());
    assertEquals(1001.0, handled.count());
  }

  @Test
  void concurrentDeliveriesAreAllCounted() throws InterruptedException {
    PrometheusMeterRegistry reg = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    MicrometerMetrics m = new MicrometerMetrics(reg);
    List<Thread> threads = new ArrayList<>();
    for (int t = 0; t < 4; t++) {
      String handler = "h" + (t % 2);
      Thread th = new Thread(() -> {
        for (int i = 0; i < 5000; i++) {
          m.observe(new Outcome(handler, "orders", "E", null, new Decision.Ack(false), 0.001));
        }
      });
      threads.add(th);
      th.start();
    }
    for (Thread th : threads) {
      th.join();
    }
    for (String h : List.of("h0", "h1")) {
      assertEquals(10_000.0, reg.get(MicrometerMetrics.PROCESSED).tag("handler", h).counter().count(), h);
      assertEquals(10_000, reg.get(MicrometerMetrics.HANDLER_DURATION).tag("handler", h).timer().count(), h);
    }
    assertEquals(4, reg.getMeters().size(), reg.scrape());
  }

  /**
   * Family name (its HELP and TYPE lines') to the family's lines, HELP and TYPE included, sorted;
   * for the Prometheus text format (HELP first) and OpenMetrics (TYPE first, # EOF last).
   */
  static Map<String, Set<String>> families(String text) {
    Map<String, Set<String>> out = new TreeMap<>();
    Set<String> current = null;
    String name = null;
    for (String l : text.split("\n")) {
      if (l.isEmpty() || l.equals("# EOF")) {
        continue;
      }
      if (l.startsWith("# HELP ") || l.startsWith("# TYPE ")) {
        String n = l.split(" ")[2];
        if (!n.equals(name)) {
          name = n;
          current = new TreeSet<>();
          if (out.put(n, current) != null) {
            throw new AssertionError("family " + n + " written twice");
          }
        }
      }
      if (current == null) {
        throw new AssertionError("a line before any # HELP or # TYPE: " + l);
      }
      current.add(l);
    }
    return out;
  }

  private static final Pattern LE = Pattern.compile("le=\"([^\"]*)\"\\} (\\S+)");

  /** The le values of series' bucket lines, in the order written. */
  static List<String> le(String text, String series) {
    List<String> out = new ArrayList<>();
    for (String l : text.split("\n")) {
      if (l.startsWith(series)) {
        Matcher mt = LE.matcher(l);
        assertTrue(mt.find(), l);
        out.add(mt.group(1));
      }
    }
    return out;
  }

  /** The cumulative counts of series' bucket lines, in the order written. */
  static List<Long> counts(String text, String series) {
    List<Long> out = new ArrayList<>();
    for (String l : text.split("\n")) {
      if (l.startsWith(series)) {
        Matcher mt = LE.matcher(l);
        assertTrue(mt.find(), l);
        out.add((long) Double.parseDouble(mt.group(2)));
      }
    }
    return out;
  }

  static String text(PrometheusRegistry reg) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    PrometheusTextFormatWriter.create().write(out, reg.scrape());
    return out.toString(StandardCharsets.UTF_8);
  }
}
