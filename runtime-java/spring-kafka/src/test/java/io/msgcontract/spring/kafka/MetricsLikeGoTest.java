package io.msgcontract.spring.kafka;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.example.shop.payment.v1.PaySuccess;
import com.example.shop.payment.v1.PaymentContract;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.msgcontract.kafka.KafkaPublisher;
import io.msgcontract.micrometer.MicrometerMetrics;
import io.msgcontract.support.Envelopes;
import io.msgcontract.v1.Envelope;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;

/**
 * The starter's metrics, scraped as Prometheus text from Micrometer's Prometheus registry, are
 * runtime-go's series: integration/springkafka writes the shape of Go's (runtime-go/metrics after
 * the same outcomes: every sample's name, label names, and the values of outcome and le) to
 * MSGCONTRACT_GO_METRICS before the suite runs. Left out of the comparison: Micrometer's own
 * {@code _max} gauges (docs/observability.md) and Go's {@code
 * msgcontract_messages_handed_back_total}, which only Go's consumer counts; the lag gauge's shape
 * is runtime-java/micrometer's tests'.
 */
class MetricsLikeGoTest {
  private static final Pattern SAMPLE = Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\\{(.*)\\})? .*$");
  private static final Pattern LABEL = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"((?:[^\"\\\\]|\\\\.)*)\"");

  final String ns = Infra.namespace();
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

  /** Boot's Prometheus registry, as spring-boot-micrometer-metrics with the Prometheus registry makes it. */
  static class Prometheus {
    @Bean
    PrometheusMeterRegistry meterRegistry() {
      return new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    }
  }

  @ParameterizedTest
  @EnumSource(Db.class)
  void theScrapedSeriesAreGos(Db kind) throws Exception {
    Path go = Path.of(Infra.env("MSGCONTRACT_GO_METRICS", "integration/springkafka, which writes Go's series"));
    db = new Infra.TestDb(kind);
    TestApp.Script.PRESET.put("m-retry", TestApp.Action.RETRY_ONCE);
    TestApp.Script.PRESET.put("m-dead", TestApp.Action.BUSINESS);
    app = Infra.start(new Class<?>[] {TestApp.class, Prometheus.class}, db, ns);
    Envelope ok = envelope("m-ok");
    try (KafkaPublisher pub = new KafkaPublisher(Infra.config(ns))) {
      pub.publish(ok);
      pub.publish(ok); // delivered twice: deduplicated
      pub.publish(envelope("m-retry"));
      pub.publish(envelope("m-dead"));
    }
    PrometheusMeterRegistry registry = app.getBean(PrometheusMeterRegistry.class);
    // handled twice (m-ok, then m-retry's retry), deduplicated, retry_scheduled, dead_lettered
    Infra.waitFor("five outcomes", () -> registry.find(MicrometerMetrics.PROCESSED).counters().stream()
        .mapToDouble(c -> c.count()).sum() == 5);
    Set<String> want = new TreeSet<>(Files.readAllLines(go));
    want.removeIf(String::isEmpty);
    assertEquals(String.join("\n", want), String.join("\n", shape(registry.scrape())));
  }

  private static Envelope envelope(String orderId) throws Exception {
    return Envelopes.newEnvelope(PaymentContract.PaySuccess.SPEC,
        PaySuccess.newBuilder().setOrderId(orderId).setAmount(1).build(), System.currentTimeMillis());
  }

  /** The shape of msgcontract's samples in Prometheus text, as integration/springkafka writes Go's. */
  static Set<String> shape(String text) {
    Set<String> out = new TreeSet<>();
    for (String line : text.split("\n")) {
      Matcher m = SAMPLE.matcher(line);
      if (line.startsWith("#") || !m.matches() || !m.group(1).startsWith("msgcontract_")
          || m.group(1).endsWith("_max") || m.group(1).startsWith("msgcontract_consumer_lag")) {
        continue;
      }
      Set<String> labels = new TreeSet<>();
      Matcher l = LABEL.matcher(m.group(2) == null ? "" : m.group(2));
      while (l.find()) {
        labels.add(l.group(1).equals("le") || l.group(1).equals("outcome") ? l.group(1) + "=" + l.group(2) : l.group(1));
      }
      out.add(m.group(1) + "{" + String.join(",", labels) + "}");
    }
    return out;
  }
}
