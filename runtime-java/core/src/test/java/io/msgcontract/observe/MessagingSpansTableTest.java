package io.msgcontract.observe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.msgcontract.support.Consumer;
import io.msgcontract.support.Ddl;
import io.msgcontract.support.Decision;
import io.msgcontract.support.DedupStore;
import io.msgcontract.support.Envelopes;
import io.msgcontract.support.EventSpec;
import io.msgcontract.support.Outbox;
import io.msgcontract.support.OutboxRelay;
import io.msgcontract.v1.Envelope;
import io.msgcontract.v1.LastError;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.context.Scope;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.data.SpanData;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The spans of the relay and the consumer against testdata/otel/messaging-spans.tsv, the table
 * runtime-go and the Python runtime check theirs against: names, kinds, required attributes and
 * their pinned values, the recommended ones this run knows (the broker, the Kafka record's place),
 * error.type exactly on failed spans, and no attribute the table does not list.
 */
class MessagingSpansTableTest {
  private static final EventSpec<LastError> SPEC = ObserveTest.SPEC;

  /** One row of the table. */
  record Row(String span, String name, String kind, List<String> languages, String transport, String level,
      List<String> attrs) {}

  static List<Row> table() throws Exception {
    List<Row> rows = new ArrayList<>();
    for (String line : Files.readAllLines(Path.of("..", "..", "testdata", "otel", "messaging-spans.tsv"))) {
      if (line.isEmpty() || line.startsWith("#")) {
        continue;
      }
      String[] c = line.split("\t", -1);
      assertEquals(7, c.length, line);
      rows.add(new Row(c[0], c[1], c[2], Arrays.asList(c[3].split(",")), c[4], c[5], Arrays.asList(c[6].split(","))));
    }
    return rows;
  }

  @Test
  void relayAndConsumerSpansMatchTheTable(@TempDir Path dir) throws Exception {
    InMemorySpanExporter exp = InMemorySpanExporter.create();
    OpenTelemetry otel = TracingTest.sdk(exp);
    Tracing tracing = new Tracing(otel, "kafka", "payments").withServer("broker.test", 9092);
    String url = "jdbc:sqlite:" + dir.resolve("business.db");

    // The producer writes two rows under its span; the relay sends them, the second's send fails.
    Span app = otel.getTracer("test").spanBuilder("order pay").startSpan();
    try (Connection c = DriverManager.getConnection(url)) {
      Outbox.migrate(c, Ddl.SQLITE);
      DedupStore.migrate(c);
      Scope s = app.makeCurrent();
      try {
        Outbox.write(c, Envelopes.newEnvelope(SPEC, LastError.newBuilder().setRange("fail").build(), 1));
        Outbox.write(c, Envelopes.newEnvelope(SPEC, LastError.newBuilder().setRange("down").build(), 1));
      } finally {
        s.close();
      }
    }
    app.end();
    List<byte[]> sent = new ArrayList<>();
    OutboxRelay relay = new OutboxRelay(() -> DriverManager.getConnection(url), (topic, key, body) -> {
      if (key.equals("range:down")) {
        throw new IllegalStateException("broker down");
      }
      sent.add(body);
    }, 10_000, 100, tracing);
    try {
      relay.flush();
    } catch (IllegalStateException e) {
      assertEquals("broker down", e.getMessage());
    }
    assertEquals(1, sent.size());

    // The consumer: a failed attempt (retry), the retry handled, a payload that does not decode.
    Consumer<LastError> c = new Consumer<>(SPEC, "h", (tx, m, e) -> {
      if (e.getRetryCount() == 0) {
        throw SPEC.rules().error(50301, "ledger down");
      }
    }, () -> 10_000L, () -> 0.0).withTracer(tracing);
    Envelope bad = Envelopes.decode(sent.get(0)).toBuilder()
        .setPayload(com.google.protobuf.ByteString.copyFrom(new byte[] {(byte) 0xff, 0x01})).build();
    try (Connection conn = DriverManager.getConnection(url)) {
      conn.setAutoCommit(false);
      Decision d = c.process(conn, sent.get(0), "errors/3/40");
      Envelope retry = assertInstanceOf(Decision.Retry.class, d).nextEnvelope().toBuilder().setNotBefore(0).build();
      assertInstanceOf(Decision.Ack.class, c.process(conn, Envelopes.encode(retry), "errors/3/41"));
      assertInstanceOf(Decision.DeadLetter.class, c.process(conn, Envelopes.encode(bad), "errors/3/42"));
    }

    List<SpanData> ours = exp.getFinishedSpanItems().stream()
        .filter(s -> s.getInstrumentationScopeInfo().getName().equals(Tracing.SCOPE)).toList();
    assertEquals(List.of("send errors", "send errors", "process errors", "process errors", "process errors"),
        ours.stream().map(SpanData::getName).toList());
    check(table(), ours, "kafka");
    Map<String, String> errorTypes = new HashMap<>();
    for (SpanData s : ours) {
      String outcome = String.valueOf(s.getAttributes().get(Tracing.OUTCOME));
      errorTypes.put(s.getName() + "/" + outcome, String.valueOf(s.getAttributes().get(Tracing.ERROR_TYPE)));
    }
    assertEquals(Map.of("send errors/null", "_OTHER", "process errors/retry_scheduled", "50301",
        "process errors/handled", "null", "process errors/dead_lettered", "-3"), errorTypes);
    assertEquals(List.of("40", "41", "42"), ours.subList(2, 5).stream()
        .map(s -> s.getAttributes().get(Tracing.KAFKA_OFFSET) + "").toList());
  }

  /**
   * Checks spans against the table's rows for Java and system (the broker's address and the Kafka
   * record's place are known in this run, so their recommended attributes are expected), and that
   * each span the table lists for Java was seen.
   */
  static void check(List<Row> table, List<SpanData> spans, String system) {
    Set<String> seen = new HashSet<>();
    for (SpanData s : spans) {
      Map<String, Object> attrs = new HashMap<>();
      s.getAttributes().forEach((k, v) -> attrs.put(k.getKey(), v));
      String op = String.valueOf(attrs.get("messaging.operation.type"));
      seen.add(op);
      List<Row> rows = table.stream().filter(r -> r.span().equals(op) && r.languages().contains("java")
          && (r.transport().equals("*") || r.transport().equals(system))).toList();
      assertTrue(!rows.isEmpty(), "span " + s.getName() + " (operation type " + op + ") is not in the table");
      String name = rows.get(0).name().replace("{messaging.operation.name}", String.valueOf(attrs.get("messaging.operation.name")));
      name = attrs.containsKey("messaging.destination.name")
          ? name.replace("{destination}", String.valueOf(attrs.get("messaging.destination.name")))
          : name.replace(" {destination}", "");
      assertEquals(name, s.getName());
      assertEquals(rows.get(0).kind(), s.getKind().name(), s.getName());
      Set<String> listed = new HashSet<>();
      boolean failed = s.getStatus().getStatusCode() == StatusCode.ERROR;
      for (Row r : rows) {
        for (String a : r.attrs()) {
          String[] kv = a.split("=", 2);
          listed.add(kv[0]);
          boolean has = attrs.containsKey(kv[0]);
          String where = s.getName() + " " + attrs.get("msgcontract.outcome") + ": " + r.level() + " " + kv[0];
          switch (r.level()) {
            case "required", "recommended" -> assertTrue(has, where + " missing");
            case "on_error" -> assertEquals(failed, has, where + " with status " + s.getStatus());
            default -> { }
          }
          if (kv.length == 2 && has) {
            assertTrue(Arrays.asList(kv[1].split("\\|")).contains(String.valueOf(attrs.get(kv[0]))),
                where + " = " + attrs.get(kv[0]) + ", want one of " + kv[1]);
          }
        }
      }
      for (String k : attrs.keySet()) {
        assertTrue(listed.contains(k), s.getName() + ": attribute " + k + " is not in the table");
      }
      assertEquals(system, attrs.get("messaging.system"));
    }
    for (Row r : table) {
      assertTrue(!r.languages().contains("java") || seen.contains(r.span()), "no " + r.span() + " span seen");
    }
  }

  @Test
  void theTableIsReadable() throws Exception {
    List<Row> t = table();
    assertTrue(t.stream().anyMatch(r -> r.span().equals("send") && r.attrs().contains("messaging.operation.name=send")));
    assertEquals(AttributeKey.stringKey("error.type"), Tracing.ERROR_TYPE);
  }
}
