package io.msgcontract.observe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.msgcontract.support.Consumer;
import io.msgcontract.support.Decision;
import io.msgcontract.support.DedupStore;
import io.msgcontract.support.Envelopes;
import io.msgcontract.support.EventSpec;
import io.msgcontract.v1.Envelope;
import io.msgcontract.v1.LastError;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.context.Scope;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.sql.Connection;
import java.sql.DriverManager;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The spans of docs/DESIGN.md ("Observability") from the Java runtime, as Go starts them. */
class TracingTest {
  private static final EventSpec<LastError> SPEC = ObserveTest.SPEC;

  /** An SDK that hands every ended span to exp. */
  static OpenTelemetry sdk(InMemorySpanExporter exp) {
    return OpenTelemetrySdk.builder()
        .setTracerProvider(SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(exp)).build())
        .build();
  }

  @Test
  void producerInjectsAndConsumerContinuesTheTraceAcrossRetries() throws Exception {
    InMemorySpanExporter exp = InMemorySpanExporter.create();
    OpenTelemetry otel = sdk(exp);
    Tracing tracing = new Tracing(otel, "msgcontract_sqlite", "grp");

    // An outbox writer under the service's span: the envelope carries it.
    Span app = otel.getTracer("test").spanBuilder("order pay").startSpan();
    Envelope.Builder b = Envelopes.builder(SPEC, LastError.newBuilder().setRange("fail").build(), 1)
        .setContentType(Envelopes.CONTENT_TYPE_PROTO)
        .setPayload(LastError.newBuilder().setRange("fail").build().toByteString());
    Scope s = app.makeCurrent();
    try {
      Tracing.inject(b);
    } finally {
      s.close();
    }
    app.end();
    String traceId = app.getSpanContext().getTraceId();
    assertTrue(b.getTrace().getTraceparent().contains(traceId), b.getTrace().getTraceparent());

    // The relay: a producer span, child of the written trace, injected in its place.
    Span pub = tracing.startPublish("errors", b);
    pub.end();
    assertTrue(b.getTrace().getTraceparent().contains(pub.getSpanContext().getSpanId()));

    List<String> seen = new ArrayList<>();
    Consumer<LastError> c = new Consumer<>(SPEC, "h", (tx, m, e) -> {
      seen.add(Span.current().getSpanContext().getTraceId());
      if (e.getRetryCount() == 0) {
        throw SPEC.rules().error(50301, "ledger down");
      }
    }, () -> 10_000L, () -> 0.0).withTracer(tracing);
    try (Connection conn = DriverManager.getConnection("jdbc:sqlite::memory:")) {
      DedupStore.migrate(conn);
      conn.setAutoCommit(false);
      Decision d = c.process(conn, Envelopes.encode(b.build()));
      Envelope retry = ((Decision.Retry) d).nextEnvelope().toBuilder().setNotBefore(0).build();
      assertEquals(b.getTrace(), retry.getTrace());
      assertTrue(c.process(conn, Envelopes.encode(retry)) instanceof Decision.Ack);
      assertTrue(c.process(conn, Envelopes.encode(retry)) instanceof Decision.Ack);
      c.process(conn, "not an envelope".getBytes(java.nio.charset.StandardCharsets.UTF_8));
    }
    assertEquals(List.of(traceId, traceId), seen, "the handler runs inside the process span");

    List<SpanData> spans = exp.getFinishedSpanItems();
    assertEquals(5, spans.size(), spans.toString()); // app, publish, 3 process; no span without an envelope
    SpanData publish = spans.get(1);
    assertEquals("send errors", publish.getName());
    assertEquals(SpanKind.PRODUCER, publish.getKind());
    assertEquals(app.getSpanContext().getSpanId(), publish.getParentSpanId());
    assertEquals("send", publish.getAttributes().get(Tracing.OPERATION_TYPE));
    List<String> outcomes = new ArrayList<>();
    for (SpanData p : spans.subList(2, 5)) {
      assertEquals("process errors", p.getName());
      assertEquals(SpanKind.CONSUMER, p.getKind());
      assertEquals(traceId, p.getTraceId());
      assertEquals(publish.getSpanId(), p.getParentSpanId());
      assertEquals(1, p.getLinks().size());
      assertEquals("msgcontract_sqlite", p.getAttributes().get(Tracing.SYSTEM));
      assertEquals("errors", p.getAttributes().get(Tracing.DESTINATION));
      assertEquals("process", p.getAttributes().get(Tracing.OPERATION_TYPE));
      assertEquals("grp", p.getAttributes().get(Tracing.CONSUMER_GROUP));
      assertEquals("range:fail", p.getAttributes().get(Tracing.BIZ_KEY));
      assertEquals("ERROR_SEEN", p.getAttributes().get(Tracing.EVENT_TYPE));
      assertEquals(b.getMessageId(), p.getAttributes().get(Tracing.MESSAGE_ID));
      outcomes.add(p.getAttributes().get(Tracing.OUTCOME) + "/" + p.getAttributes().get(Tracing.RETRY_COUNT));
    }
    assertEquals(List.of("retry_scheduled/0", "handled/1", "deduplicated/1"), outcomes);
    SpanData failed = spans.get(2);
    assertEquals(StatusCode.ERROR, failed.getStatus().getStatusCode());
    assertEquals(1.0, failed.getAttributes().get(Tracing.RETRY_DELAY));
    assertFalse(failed.getEvents().isEmpty(), "the failure is recorded as an exception event");
    assertEquals(StatusCode.UNSET, spans.get(3).getStatus().getStatusCode());
  }

  @Test
  void aPayloadThatDoesNotDecodeIsDeadLetteredInsideItsSpan() throws Exception {
    InMemorySpanExporter exp = InMemorySpanExporter.create();
    OpenTelemetry otel = sdk(exp);
    Consumer<LastError> c = new Consumer<>(SPEC, "h", (tx, m, e) -> { }).withTracer(new Tracing(otel, "kafka", "g"));
    Envelope bad = Envelopes.newEnvelope(SPEC, LastError.newBuilder().setRange("x").build(), 1).toBuilder()
        .setPayload(com.google.protobuf.ByteString.copyFrom(new byte[] {(byte) 0xff, 0x01})).build();
    try (Connection conn = DriverManager.getConnection("jdbc:sqlite::memory:")) {
      DedupStore.migrate(conn);
      conn.setAutoCommit(false);
      assertTrue(c.process(conn, Envelopes.encode(bad)) instanceof Decision.DeadLetter);
    }
    SpanData s = exp.getFinishedSpanItems().get(0);
    assertEquals("dead_lettered", s.getAttributes().get(Tracing.OUTCOME));
    assertEquals("decode", s.getAttributes().get(Tracing.DEAD_LETTER_REASON));
    assertEquals(StatusCode.ERROR, s.getStatus().getStatusCode());
    assertEquals("exception", s.getEvents().get(0).getName());
  }

  @Test
  void withoutATracerOrASpanNothingIsInjected() throws Exception {
    Envelope.Builder b = Envelopes.builder(SPEC, LastError.newBuilder().setRange("x").build(), 1);
    Tracing.inject(b);
    assertFalse(b.hasTrace());
    // The API without an SDK: a no-op tracer, nothing injected either.
    Tracing noop = new Tracing(OpenTelemetry.noop(), "kafka", "");
    Span s = noop.startPublish("t", b);
    s.end();
    assertFalse(b.hasTrace());
    assertNotNull(noop.start("t", "h", b.build()));
  }
}
