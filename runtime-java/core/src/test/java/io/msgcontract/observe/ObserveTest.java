package io.msgcontract.observe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.msgcontract.support.BizKeyBuilder;
import io.msgcontract.support.Consumer;
import io.msgcontract.support.DedupStore;
import io.msgcontract.support.Envelopes;
import io.msgcontract.support.ErrorRange;
import io.msgcontract.support.ErrorRules;
import io.msgcontract.support.EventSpec;
import io.msgcontract.support.RetryPolicy;
import io.msgcontract.v1.Envelope;
import io.msgcontract.v1.LastError;
import io.msgcontract.v1.TraceContext;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/** The vocabulary of docs/DESIGN.md ("Observability") from the Java runtime. */
class ObserveTest {
  static final EventSpec<LastError> SPEC = new EventSpec<>(
      "msgcontract.v1.LastError", "errors", "ERROR_SEEN", "range:{range}",
      new RetryPolicy(1000, 2.0, 0, 60000, 1),
      new ErrorRules(List.of(new ErrorRange(50000, 59999, true, "system")), false),
      "", LastError.getDefaultInstance(),
      m -> new BizKeyBuilder().literal("range:").string("range", m.getRange()).key());

  @Test
  void metricsAndLogLinesUseTheSharedNames() throws Exception {
    List<String> lines = new ArrayList<>();
    JsonLog log = new JsonLog(lines::add);
    PrometheusRegistry reg = new PrometheusRegistry();
    PrometheusMetrics m2 = new PrometheusMetrics(reg);
    Consumer<LastError> c = new Consumer<>(SPEC, "h", (tx, m, e) -> {
      if (m.getRange().equals("fail")) {
        throw SPEC.rules().error(50301, "ledger down");
      }
    }, () -> 10_000L, () -> 0.0).withObserver(o -> {
      m2.observe(o);
      log.observe(o);
    });
    try (Connection conn = DriverManager.getConnection("jdbc:sqlite::memory:")) {
      DedupStore.migrate(conn);
      conn.setAutoCommit(false);
      Envelope ok = Envelopes.newEnvelope(SPEC, LastError.newBuilder().setRange("ok").build(), 1).toBuilder()
          .setTrace(TraceContext.newBuilder().setTraceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"))
          .build();
      c.process(conn, Envelopes.encode(ok));
      c.process(conn, Envelopes.encode(ok));
      c.process(conn, Envelopes.encode(Envelopes.newEnvelope(SPEC, LastError.newBuilder().setRange("fail").build(), 1)));
      c.process(conn, "not an envelope".getBytes(StandardCharsets.UTF_8));
    }
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    PrometheusTextFormatWriter.create().write(out, reg.scrape());
    String text = out.toString(StandardCharsets.UTF_8);
    Set<String> series = new TreeSet<>();
    for (String l : text.split("\n")) {
      if (!l.startsWith("#") && !l.isEmpty()) {
        series.add(l.replaceAll("[{ ].*", ""));
      }
    }
    assertEquals(new TreeSet<>(List.of(
        "msgcontract_end_to_end_latency_seconds_bucket", "msgcontract_end_to_end_latency_seconds_count",
        "msgcontract_end_to_end_latency_seconds_sum",
        "msgcontract_handler_duration_seconds_bucket", "msgcontract_handler_duration_seconds_count",
        "msgcontract_handler_duration_seconds_sum", "msgcontract_messages_processed_total",
        "msgcontract_retry_delay_seconds_bucket", "msgcontract_retry_delay_seconds_count",
        "msgcontract_retry_delay_seconds_sum")), series, text);
    for (String outcome : List.of("handled", "deduplicated", "retry_scheduled", "dead_lettered")) {
      assertTrue(text.contains("outcome=\"" + outcome + "\"} 1"), outcome + " in\n" + text);
    }
    assertTrue(text.contains("msgcontract_retry_delay_seconds_bucket{event_type=\"ERROR_SEEN\",handler=\"h\",le=\"1.5\"} 1"), text);
    assertEquals(4, lines.size(), lines.toString());
    assertEquals("{\"time\":\"x\",\"level\":\"INFO\",\"msg\":\"msgcontract: handled\",\"handler\":\"h\","
        + "\"topic\":\"errors\",\"message_id\":\"" + ok(lines) + "\",\"biz_key\":\"range:ok\",\"retry_count\":0,"
        + "\"event_type\":\"ERROR_SEEN\",\"trace_id\":\"4bf92f3577b34da6a3ce929d0e0e4736\","
        + "\"span_id\":\"00f067aa0ba902b7\",\"outcome\":\"handled\"}",
        lines.get(0).replaceFirst("\"time\":\"[^\"]*\"", "\"time\":\"x\""));
    assertTrue(lines.get(2).contains("\"outcome\":\"retry_scheduled\",\"code\":50301,\"delay_seconds\":1.0"), lines.get(2));
    assertTrue(lines.get(3).contains("\"outcome\":\"dead_lettered\",\"reason\":\"decode\",\"code\":-3"), lines.get(3));
    assertTrue(lines.get(3).contains("\"handler\":\"\",\"topic\":\"errors\",\"outcome\""), lines.get(3));
    assertTrue(text.contains("msgcontract_messages_processed_total{event_type=\"\",handler=\"\",outcome=\"dead_lettered\"} 1"), text);
  }

  /** runtime-go/metrics' EndToEndBuckets as its text format writes them (TestEndToEndBuckets), then +Inf. */
  static final List<String> GO_END_TO_END_LE = List.of(
      "0.001", "0.002", "0.004", "0.008", "0.016", "0.032", "0.064", "0.128", "0.256", "0.512",
      "1.024", "2.048", "4.096", "8.192", "16.384", "32.768", "65.536", "131.072", "262.144", "524.288",
      "1048.576", "2097.152", "+Inf");

  /**
   * One end-to-end observation per handled delivery, from its occurred_at to the consumer's clock
   * after the commit, in its own transaction and in a shared one: none for a duplicate, a retry or an
   * envelope without occurred_at; 0 for a producer clock ahead of the consumer's.
   */
  @Test
  void endToEndLatencyRunsFromOccurredAtToTheCommit() throws Exception {
    PrometheusRegistry reg = new PrometheusRegistry();
    PrometheusMetrics metrics = new PrometheusMetrics(reg);
    Consumer<LastError> c = new Consumer<>(SPEC, "h", (tx, m, e) -> {
      if (m.getRange().equals("fail")) {
        throw SPEC.rules().error(50301, "ledger down");
      }
    }, () -> 100_000L, () -> 0.0).withObserver(metrics);
    try (Connection conn = DriverManager.getConnection("jdbc:sqlite::memory:")) {
      DedupStore.migrate(conn);
      conn.setAutoCommit(false);
      byte[] slow = envelope("slow", 98_500); // 1.5 s: le 2.048
      c.process(conn, slow);
      c.process(conn, slow); // deduplicated
      c.process(conn, envelope("fail", 99_000)); // retry_scheduled
      c.process(conn, envelope("none", 0)); // no occurred_at
      for (Consumer.Pending p : Consumer.processBatch(conn,
          List.of(new Consumer.BatchItem(c, envelope("ahead", 103_000), null)))) { // the producer's clock ahead: 0
        p.committed();
      }
    }
    String text = text(reg);
    String series = "msgcontract_end_to_end_latency_seconds_bucket{event_type=\"ERROR_SEEN\",handler=\"h\",le=\"";
    List<String> le = new ArrayList<>();
    for (String l : text.split("\n")) {
      if (l.startsWith(series)) {
        String edge = l.substring(series.length(), l.indexOf('"', series.length()));
        le.add(edge);
        double edgeValue = edge.equals("+Inf") ? Double.POSITIVE_INFINITY : Double.parseDouble(edge);
        assertTrue(l.endsWith("\"} " + (edgeValue >= 2.048 ? 2 : 1)), l); // the one ahead at 0, then 1.5 s
      }
    }
    assertEquals(GO_END_TO_END_LE, le, text);
    assertTrue(text.contains("# HELP msgcontract_end_to_end_latency_seconds Time from the envelope's occurred_at"), text);
    assertTrue(text.contains("msgcontract_end_to_end_latency_seconds_count{event_type=\"ERROR_SEEN\",handler=\"h\"} 2\n"), text);
    assertTrue(text.contains("msgcontract_end_to_end_latency_seconds_sum{event_type=\"ERROR_SEEN\",handler=\"h\"} 1.5\n"), text);
  }

  private static byte[] envelope(String range, long occurredAtMs) throws Exception {
    return Envelopes.encode(Envelopes.newEnvelope(SPEC, LastError.newBuilder().setRange(range).build(), occurredAtMs));
  }

  @Test
  void consumerLagIsTheSharedGauge() throws Exception {
    PrometheusRegistry reg = new PrometheusRegistry();
    PrometheusMetrics m = new PrometheusMetrics(reg);
    assertEquals("", text(reg)); // no Kafka loop reported: no gauge
    m.lag("billing", "ns.orders", 2, 15);
    m.lag("billing", "ns.orders", 0, -1); // a high watermark older than the fetch: never negative
    String text = text(reg);
    assertTrue(text.contains("# TYPE msgcontract_consumer_lag_messages gauge"), text);
    assertTrue(text.contains("msgcontract_consumer_lag_messages{group=\"billing\",partition=\"2\",topic=\"ns.orders\"} 15.0"), text);
    assertTrue(text.contains("msgcontract_consumer_lag_messages{group=\"billing\",partition=\"0\",topic=\"ns.orders\"} 0.0"), text);
    m.forget("billing", "ns.orders", 2); // revoked: its next owner reports it
    text = text(reg);
    assertTrue(!text.contains("partition=\"2\""), text);
  }

  private static String text(PrometheusRegistry reg) throws java.io.IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    PrometheusTextFormatWriter.create().write(out, reg.scrape());
    return out.toString(StandardCharsets.UTF_8);
  }

  private static String ok(List<String> lines) {
    return lines.get(0).replaceAll(".*\"message_id\":\"([^\"]*)\".*", "$1");
  }
}
