package io.msgcontract.support;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.msgcontract.observe.Tracing;
import io.msgcontract.v1.Envelope;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.context.Scope;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The outbox writer and the relay carry the producer's trace, as runtime-go's do; no broker. */
class OutboxTracingTest {
  @Test
  void writeInjectsTheCurrentSpanAndTheRelayPublishesInAChildSpan() throws Exception {
    InMemorySpanExporter exp = InMemorySpanExporter.create();
    OpenTelemetrySdk otel = OpenTelemetrySdk.builder()
        .setTracerProvider(SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(exp)).build())
        .build();
    Envelope env = Envelope.newBuilder().setMessageId("m1").setBizKey("k").setEventType("E").setTopic("t").build();
    byte[] stored;
    Span app = otel.getTracer("test").spanBuilder("order pay").startSpan();
    try (Connection c = DriverManager.getConnection("jdbc:sqlite::memory:")) {
      Outbox.migrate(c, Ddl.SQLITE);
      Scope s = app.makeCurrent();
      try {
        Outbox.write(c, env);
      } finally {
        s.close();
      }
      Outbox.write(c, env.toBuilder().setMessageId("m2").build()); // no current span: no trace
      try (Statement st = c.createStatement();
          ResultSet rs = st.executeQuery("SELECT envelope FROM msg_outbox ORDER BY id")) {
        rs.next();
        stored = rs.getBytes(1);
        rs.next();
        assertTrue(Envelopes.decode(rs.getBytes(1)).getTrace().getTraceparent().isEmpty());
      }
    }
    app.end();
    Envelope written = Envelopes.decode(stored);
    assertTrue(written.getTrace().getTraceparent().contains(app.getSpanContext().getSpanId()));

    OutboxRelay.Traced t = OutboxRelay.trace(new Tracing(otel, "kafka", ""), "ns.t", stored);
    t.span().end();
    List<SpanData> spans = exp.getFinishedSpanItems();
    SpanData pub = spans.get(1);
    assertEquals("send ns.t", pub.getName());
    assertEquals(SpanKind.PRODUCER, pub.getKind());
    assertEquals(app.getSpanContext().getSpanId(), pub.getParentSpanId());
    assertEquals("kafka", pub.getAttributes().get(Tracing.SYSTEM));
    assertEquals("m1", pub.getAttributes().get(Tracing.MESSAGE_ID));
    assertTrue(Envelopes.decode(t.body()).getTrace().getTraceparent().contains(pub.getSpanId()));

    byte[] junk = "not an envelope".getBytes(StandardCharsets.UTF_8);
    OutboxRelay.Traced raw = OutboxRelay.trace(new Tracing(otel, "kafka", ""), "t", junk);
    assertNull(raw.span());
    assertArrayEquals(junk, raw.body());
    assertNull(OutboxRelay.trace(null, "t", stored).span());
  }
}
