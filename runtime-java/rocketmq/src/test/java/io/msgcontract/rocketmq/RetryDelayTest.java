package io.msgcontract.rocketmq;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.msgcontract.kafka.testpb.OrderNote;
import io.msgcontract.support.Consumer;
import io.msgcontract.support.DecodeException;
import io.msgcontract.support.Envelopes;
import io.msgcontract.support.EventSpec;
import io.msgcontract.support.RetryPolicy;
import io.msgcontract.support.RetryableException;
import io.msgcontract.v1.Envelope;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * 1,000 retries (200 keys, 5 each) through the broker's timer on the schedule
 * runtime-go's TestRetryDelays uses (1.1 s base, ×1.5, 100 ms jitter, 3 s cap:
 * every copy is due past the 1 s timer lead, so every one goes through the
 * timer): for each retry copy, the time it was ready for its handler in the
 * loop (arrived, or released from the hold; never before its not_before)
 * minus its not_before, the figure Go's test takes at Fetch. It prints that
 * distribution (java-rocketmq-retry-delays: ...) and the same from the
 * handler's start, and asserts only that no handler ran early: how late
 * depends on the machine's load, early would be a missed hold.
 */
class RetryDelayTest extends BrokerTest {
  @Test
  void retriesRunOnTheirScheduleNeverEarly() throws Exception {
    int keys = 200;
    int retries = 5;
    EventSpec<OrderNote> spec = Fixture.spec(new RetryPolicy(1100, 1.5, 100, 3000, retries));
    List<Long> ready = Collections.synchronizedList(new ArrayList<>());
    List<Long> started = Collections.synchronizedList(new ArrayList<>());
    RocketConfig cfg = fx.config();
    cfg.maxInFlight = 512;
    RocketConsumerLoop l = new RocketConsumerLoop(cfg, Fixture.GROUP, fx::open);
    l.readyForTests = (body, at) -> {
      try {
        Envelope env = Envelopes.decode(body);
        if (env.getNotBefore() > 0) {
          ready.add(at - env.getNotBefore());
        }
      } catch (DecodeException e) {
        throw new IllegalStateException(e);
      }
    };
    l.register(spec, Fixture.HANDLER, new Consumer<>(spec, Fixture.HANDLER, (tx, m, env) -> {
      if (env.getNotBefore() > 0) {
        started.add(System.currentTimeMillis() - env.getNotBefore());
      }
      if (env.getRetryCount() < retries) {
        throw new RetryableException(50001, "system", "retry " + env.getRetryCount());
      }
      Fixture.insert("java").handle(tx, m, env);
    }));
    start(l);
    RocketPublisher pub = publisher();
    for (int i = 0; i < keys; i++) {
      pub.publish(Fixture.TOPIC, Fixture.envelope("k" + i));
    }
    Fixture.waitFor(keys + " keys through " + retries + " retries each", () -> l.handled() == keys);
    assertEquals(keys * retries, l.retried());
    Fixture.assertOneEach(fx.effects(), keys);
    List<Long> r = sorted(ready);
    List<Long> s = sorted(started);
    assertEquals(keys * retries, s.size(), "retry copies handled");
    assertTrue(r.size() >= keys * retries, "retry copies ready: " + r.size());
    System.out.println("java-rocketmq-retry-delays: " + line(r,
        "ready in the loop minus not_before, as Go's at Fetch"));
    System.out.println("java-rocketmq-retry-delays-handler: " + line(s,
        "handler start minus not_before, the batches' SQLite work included"));
    assertTrue(s.get(0) >= 0, "a retry copy's handler ran " + -s.get(0) + " ms before its not_before");
  }

  private static List<Long> sorted(List<Long> l) {
    List<Long> s = new ArrayList<>(l);
    Collections.sort(s);
    return s;
  }

  private static String line(List<Long> s, String what) {
    long within = s.stream().filter(d -> d >= -50 && d <= 50).count();
    return String.format("n=%d p50=%+dms p99=%+dms max=%+dms min=%+dms within ±50ms: %d of %d"
        + " (schedule base 1.1s x1.5 jitter 100ms cap 3s, timer lead 1s; %s)", s.size(), q(s, 0.5), q(s, 0.99),
        s.get(s.size() - 1), s.get(0), within, s.size(), what);
  }

  private static long q(List<Long> s, double p) {
    return s.get((int) (p * (s.size() - 1)));
  }
}
