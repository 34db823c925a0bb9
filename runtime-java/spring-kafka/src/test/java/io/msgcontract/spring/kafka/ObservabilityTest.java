package io.msgcontract.spring.kafka;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.example.shop.payment.v1.PaymentContract;
import com.example.shop.payment.v1.PaySuccess;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.msgcontract.kafka.KafkaPublisher;
import io.msgcontract.micrometer.MicrometerMetrics;
import io.msgcontract.observe.Tracing;
import io.msgcontract.support.Envelopes;
import io.msgcontract.v1.Envelope;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.context.Scope;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;

/** With a MeterRegistry and an OpenTelemetry bean: MicrometerMetrics counts, and each delivery has a span. */
class ObservabilityTest {
  final String ns = Infra.namespace();
  Infra.TestDb db;
  ConfigurableApplicationContext app;

  @AfterEach
  void close() throws Exception {
    if (app != null) {
      app.close();
    }
    if (db != null) {
      db.close();
    }
  }

  /** What Boot's Micrometer and its Micrometer Tracing OpenTelemetry bridge would provide. */
  static class Observability {
    @Bean
    MeterRegistry meterRegistry() {
      return new SimpleMeterRegistry();
    }

    @Bean
    InMemorySpanExporter spans() {
      return InMemorySpanExporter.create();
    }

    @Bean
    OpenTelemetry openTelemetry(InMemorySpanExporter spans) {
      return OpenTelemetrySdk.builder()
          .setTracerProvider(SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(spans)).build())
          .build();
    }
  }

  @ParameterizedTest
  @EnumSource(Db.class)
  void deliveriesAreCountedAndContinueTheProducersTrace(Db kind) throws Exception {
    db = new Infra.TestDb(kind);
    app = Infra.start(new Class<?>[] {TestApp.class, Observability.class}, db, ns);
    OpenTelemetry otel = app.getBean(OpenTelemetry.class);
    InMemorySpanExporter spans = app.getBean(InMemorySpanExporter.class);
    Span producer = otel.getTracer("test").spanBuilder("pay").startSpan();
    Envelope env;
    Scope s = producer.makeCurrent();
    try {
      env = Tracing.inject(Envelopes.newEnvelope(PaymentContract.PaySuccess.SPEC,
          PaySuccess.newBuilder().setOrderId("traced").setAmount(7).build(), System.currentTimeMillis()));
    } finally {
      s.close();
      producer.end();
    }
    try (KafkaPublisher pub = new KafkaPublisher(Infra.config(ns))) {
      pub.publish(env);
    }
    MeterRegistry registry = app.getBean(MeterRegistry.class);
    Infra.waitFor("the processed counter", () -> registry.find(MicrometerMetrics.PROCESSED).counters().stream()
        .mapToDouble(c -> c.count()).sum() == 1);
    Infra.waitFor("the delivery's span", () -> spans.getFinishedSpanItems().stream()
        .anyMatch(d -> d.getName().equals("process order-event")));
    SpanData process = spans.getFinishedSpanItems().stream()
        .filter(d -> d.getName().equals("process order-event")).findFirst().orElseThrow();
    assertEquals(producer.getSpanContext().getTraceId(), process.getTraceId(), "the delivery's span left the trace");
    assertEquals(producer.getSpanContext().getSpanId(), process.getParentSpanId());
    assertEquals(Infra.GROUP, process.getAttributes().get(Tracing.CONSUMER_GROUP));
    List<String> names = registry.getMeters().stream().map(m -> m.getId().getName()).distinct().toList();
    assertTrue(names.contains(MicrometerMetrics.CONSUMER_LAG), "no lag gauge among " + names);
  }
}
