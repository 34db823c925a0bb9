package io.msgcontract.kafka;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.msgcontract.observe.PrometheusMetrics;
import io.msgcontract.support.Envelopes;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.sql.SQLException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * msgcontract_consumer_lag_messages from the Java loop on the real broker,
 * through PrometheusMetrics: the name and labels runtime-go's transport uses,
 * and the same value (records behind the partition's end after the last fetch).
 */
class LagTest extends BrokerTest {
  private static final int N = 20;
  private static final int MAX_BUFFERED = 5;

  @Test
  void lagIsReportedAfterEachFetchAndForgottenWhenThePartitionGoes() throws Exception {
    KafkaConfig cfg = fx.config();
    cfg.partitions = 1;
    cfg.maxBuffered = MAX_BUFFERED; // a poll returns at most 5 records, and the loop pauses at 5 unsettled
    cfg.dbRetryMs = 100;
    KafkaPublisher pub = new KafkaPublisher(cfg);
    toClose.add(pub);
    for (int i = 0; i < N; i++) {
      pub.publish(Fixture.TOPIC, "k" + i, Envelopes.encode(Fixture.envelope("k" + i)));
    }
    AtomicBoolean dbUp = new AtomicBoolean(false);
    PrometheusRegistry reg = new PrometheusRegistry();
    KafkaConsumerLoop l = new KafkaConsumerLoop(cfg, Fixture.GROUP, () -> {
      if (!dbUp.get()) {
        throw new SQLException("database down (test)");
      }
      return fx.open();
    });
    l.register(Fixture.SPEC, Fixture.HANDLER, KafkaLoopTest.insert("java")).withLag(new PrometheusMetrics(reg));
    toClose.add(l);
    Thread t = Fixture.start(l, errors);
    threads.add(t);
    String topic = fx.namespace + Fixture.TOPIC;

    // Nothing settles while the database is down: the loop holds at most
    // two polls' records (5 each) and pauses, so 11 to 15 of the 20 records
    // are behind its position (15 when the first poll returned 5, as it does
    // when all 20 are on the broker before the group starts).
    Fixture.waitFor("a lag of 15 or less reported", () -> {
      Long v = lag(reg, topic);
      return v != null && v <= N - MAX_BUFFERED;
    });
    long behind = lag(reg, topic);
    assertTrue(behind >= N - 2 * MAX_BUFFERED + 1 && behind <= N - MAX_BUFFERED, "lag " + behind);
    assertEquals(0, l.handled());
    assertEquals(N, fx.backlog(), "nothing committed while the database is down");

    dbUp.set(true);
    Fixture.waitFor("all handled", () -> l.handled() == N);
    Fixture.waitFor("a lag of 0", () -> Long.valueOf(0).equals(lag(reg, topic)));
    assertFalse(text(reg).contains(".retry."), "no record was fetched from the retry topic:\n" + text(reg));

    l.close(); // leaving the group revokes the partition: its series goes
    t.join(Fixture.WAIT.toMillis());
    assertEquals(null, lag(reg, topic), text(reg));
  }

  /** The gauge's value for (billing, topic, partition 0), null when the series is absent. */
  private static Long lag(PrometheusRegistry reg, String topic) {
    Matcher m = Pattern.compile("(?m)^msgcontract_consumer_lag_messages\\{group=\"" + Fixture.GROUP
        + "\",partition=\"0\",topic=\"" + Pattern.quote(topic) + "\"} (\\S+)$").matcher(text(reg));
    return m.find() ? (long) Double.parseDouble(m.group(1)) : null;
  }

  private static String text(PrometheusRegistry reg) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try {
      PrometheusTextFormatWriter.create().write(out, reg.scrape());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return out.toString(StandardCharsets.UTF_8);
  }
}
