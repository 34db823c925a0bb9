package io.msgcontract.spring.kafka;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.msgcontract.observe.Tracing;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.data.SpanData;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * One trace across Go and Java: integration/springkafka publishes PaySuccess "traced-from-go"
 * from runtime-go in a producer span before this suite runs (MSGCONTRACT_GO_TRACE_*); the Spring
 * listener's span continues it, and what the listener publishes through the outbox ("fwd-traced-
 * from-go-&lt;id&gt;") carries the same trace on to Kafka, where the harness's Go consumer checks it after
 * the suite.
 */
class TraceAcrossTest {
  Infra.TestDb db;
  ConfigurableApplicationContext app;

  @AfterEach
  void close() throws Exception {
    TestApp.Script.PRESET.clear();
    if (app != null) {
      app.close();
    }
    if (db != null) {
      db.close();
    }
  }

  @ParameterizedTest
  @EnumSource(Db.class)
  void theListenersSpanAndItsOutboxEventContinueTheGoProducersTrace(Db kind) throws Exception {
    String ns = Infra.env("MSGCONTRACT_GO_TRACE_NS", "integration/springkafka, which publishes the Go record");
    String traceId = Infra.env("MSGCONTRACT_GO_TRACE_ID", "integration/springkafka, which publishes the Go record");
    String spanId = Infra.env("MSGCONTRACT_GO_SPAN_ID", "integration/springkafka, which publishes the Go record");
    db = new Infra.TestDb(kind);
    TestApp.Script.PRESET.put("traced-from-go", TestApp.Action.FORWARD);
    // A group per database: each reads the Go record from the first offset.
    app = Infra.start(new Class<?>[] {TestApp.class, ObservabilityTest.Observability.class}, db, ns,
        "msgcontract.group=trace-" + kind.name().toLowerCase(java.util.Locale.ROOT), "msgcontract.relay.enabled=true",
        "msgcontract.relay.interval-ms=50");
    InMemorySpanExporter spans = app.getBean(InMemorySpanExporter.class);
    Infra.waitFor("the Go record's delivery span, a child of Go's send span",
        () -> processSpans(spans, traceId).stream().anyMatch(d -> d.getParentSpanId().equals(spanId)));
    SpanData process = processSpans(spans, traceId).stream().filter(d -> d.getParentSpanId().equals(spanId))
        .findFirst().orElseThrow();
    assertEquals("trace-" + kind.name().toLowerCase(java.util.Locale.ROOT),
        process.getAttributes().get(Tracing.CONSUMER_GROUP));
    // The relay sends the forwarded event in the same trace.
    Infra.waitFor("the relay's send span of the forwarded event", () -> spans.getFinishedSpanItems().stream()
        .anyMatch(d -> d.getName().equals("send order-event") && d.getTraceId().equals(traceId)));
    assertEquals(1, db.count("SELECT count(*) FROM msg_outbox WHERE sent_at > 0"));
    assertTrue(db.count("SELECT count(*) FROM payments WHERE order_id = 'traced-from-go'") == 1);
  }

  private static List<SpanData> processSpans(InMemorySpanExporter spans, String traceId) {
    return spans.getFinishedSpanItems().stream()
        .filter(d -> d.getName().equals("process order-event") && d.getTraceId().equals(traceId)).toList();
  }
}
