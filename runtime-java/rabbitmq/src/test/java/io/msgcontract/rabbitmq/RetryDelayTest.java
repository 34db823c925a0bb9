package io.msgcontract.rabbitmq;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.msgcontract.kafka.testpb.OrderNote;
import io.msgcontract.support.EventSpec;
import io.msgcontract.support.RetryPolicy;
import io.msgcontract.support.RetryableException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * 1,000 retries (50 keys, 20 each) through the delay queues on a real
 * schedule (20 ms base, x2, 10 ms jitter, 200 ms cap), as runtime-go's
 * TestRetryDelays: each retry copy's handler run minus its not_before. It
 * reports the distribution (java-rabbitmq-retry-delays: ...) and asserts only
 * that none ran early: how late depends on the machine's load, early would be
 * a wrong delay queue.
 */
class RetryDelayTest extends BrokerTest {
  @Test
  void retriesRunOnTheirScheduleNeverEarly() throws Exception {
    int keys = 50;
    int retries = 20;
    EventSpec<OrderNote> spec = Fixture.spec(new RetryPolicy(20, 2.0, 10, 200, retries));
    List<Long> late = Collections.synchronizedList(new ArrayList<>());
    RabbitConsumerLoop l = loop(fx.config(), fx::open, spec, (tx, m, env) -> {
      long now = System.currentTimeMillis();
      if (env.getNotBefore() > 0) {
        late.add(now - env.getNotBefore());
      }
      if (env.getRetryCount() < retries) {
        throw new RetryableException(50001, "system", "retry " + env.getRetryCount());
      }
      Fixture.insert("java").handle(tx, m, env);
    });
    RabbitPublisher pub = publisher();
    for (int i = 0; i < keys; i++) {
      pub.publish(Fixture.envelope("k" + i));
    }
    Fixture.waitFor(keys + " keys through " + retries + " retries each", () -> l.handled() == keys);
    assertEquals(keys * retries, l.retried());
    Fixture.assertOneEach(fx.effects(), keys);
    List<Long> s = new ArrayList<>(late);
    Collections.sort(s);
    assertEquals(keys * retries, s.size(), "retry copies handled");
    long within = s.stream().filter(d -> d >= -50 && d <= 50).count();
    String line = String.format("n=%d p50=%+dms p99=%+dms max=%+dms min=%+dms within ±50ms: %d of %d"
        + " (schedule base 20ms x2 jitter 10ms cap 200ms; handler start minus not_before)", s.size(),
        q(s, 0.5), q(s, 0.99), s.get(s.size() - 1), s.get(0), within, s.size());
    System.out.println("java-rabbitmq-retry-delays: " + line);
    assertTrue(s.get(0) >= 0, "a retry copy ran " + -s.get(0) + " ms before its not_before");
  }

  private static long q(List<Long> s, double p) {
    return s.get((int) (p * (s.size() - 1)));
  }
}
