package io.msgcontract.rocketmq;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.msgcontract.support.Consumer;
import io.msgcontract.support.NonRetryableException;
import io.msgcontract.support.RetryableException;
import io.msgcontract.v1.Envelope;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The loop's decisions on a real broker: once per message, retries on the contract's schedule, dead letters. */
class LoopTest extends BrokerTest {
  @Test
  void eachMessageTakesEffectOnceAndDuplicatesAreAcknowledged() throws Exception {
    RocketConsumerLoop l = loop(Fixture.insert("java"));
    RocketPublisher pub = publisher();
    int n = 40;
    for (int i = 0; i < n; i++) {
      Envelope env = Fixture.envelope("k" + i);
      pub.publish(Fixture.TOPIC, env);
      if (i % 4 == 0) {
        pub.publish(Fixture.TOPIC, env); // a producer's retry: same message_id
      }
    }
    Fixture.waitFor("an effect per message and the duplicates acknowledged",
        () -> l.handled() == n && l.deduplicated() == n / 4);
    Thread.sleep(500); // late duplicates would show up now
    Fixture.assertOneEach(fx.effects(), n);
    assertEquals(0, l.retried() + l.deadLettered() + l.expired());
  }

  @Test
  void retryableFailuresRetryOnTheScheduleThenSucceed() throws Exception {
    List<Long> lateness = Collections.synchronizedList(new ArrayList<>());
    Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();
    RocketConsumerLoop l = loop((tx, m, env) -> {
      if (env.getNotBefore() > 0) {
        lateness.add(System.currentTimeMillis() - env.getNotBefore());
      }
      if (runs.computeIfAbsent(m.getValue(), k -> new AtomicInteger()).incrementAndGet() <= 2) {
        throw new RetryableException(50001, "system", "not yet");
      }
      Fixture.insert("java").handle(tx, m, env);
    });
    RocketPublisher pub = publisher();
    for (int i = 0; i < 5; i++) {
      pub.publish(Fixture.TOPIC, Fixture.envelope("r" + i));
    }
    Fixture.waitFor("5 handled after 2 retries each", () -> l.handled() == 5);
    Fixture.assertOneEach(fx.effects(), 5);
    assertEquals(10, l.retried());
    assertEquals(10, lateness.size(), "retry copies handled");
    for (long d : lateness) {
      assertTrue(d >= 0, "a retry copy ran " + -d + " ms before its not_before: " + lateness);
    }
  }

  @Test
  void poisonIsDeadLetteredAndListedByTheCli() throws Exception {
    RocketConsumerLoop l = loop((tx, m, env) -> {
      if (m.getValue().startsWith("poison")) {
        throw new NonRetryableException(40001, "business", "order unknown");
      }
      if (m.getValue().startsWith("tired")) {
        throw new RetryableException(50002, "system", "always down");
      }
      Fixture.insert("java").handle(tx, m, env);
    });
    RocketPublisher pub = publisher();
    Envelope poison = Fixture.envelope("poison-java");
    pub.publish(Fixture.TOPIC, poison);
    pub.publish(Fixture.TOPIC, Fixture.envelope("tired-java"));
    pub.publish(Fixture.TOPIC, Fixture.envelope("fine"));
    Fixture.waitFor("two dead letters", () -> l.deadLettered() == 2 && l.handled() == 1);
    assertEquals(3, l.retried(), "the policy's 3 retries of tired-java");
    String bin = Fixture.env("MSGCONTRACT_BIN");
    String ns = Fixture.env("MSGCONTRACT_ROCKETMQ_NAMESRV");
    String out = Fixture.run(List.of(bin, "dlq", "list", "--rocketmq", ns, "--namespace", fx.namespace));
    String line = out.lines().filter(s -> s.contains("non_retryable")).findFirst().orElse("");
    assertTrue(line.contains("40001") && line.contains(Fixture.GROUP), out);
    assertTrue(out.lines().anyMatch(s -> s.contains("retries_exhausted") && s.contains("50002")), out);
    String id = line.trim().split("\\s+")[0];
    String shown = Fixture.run(List.of(bin, "dlq", "show", "--rocketmq", ns, "--namespace", fx.namespace, id));
    assertTrue(shown.contains(Fixture.HANDLER) && shown.contains("order unknown") && shown.contains("poison-java")
        && shown.contains(poison.getMessageId()), shown);
  }

  @Test
  void aCrashBetweenRetryAndAckIsResolvedByTheRetryChain() throws Exception {
    Set<String> failed = ConcurrentHashMap.newKeySet();
    RocketConsumerLoop l = new RocketConsumerLoop(fx.config(), Fixture.GROUP, fx::open);
    l.register(Fixture.SPEC, Fixture.HANDLER, new Consumer<>(Fixture.SPEC, Fixture.HANDLER, (tx, m, env) -> {
      if (failed.add(m.getValue())) {
        throw new RetryableException(50001, "system", "once");
      }
      Fixture.insert("java").handle(tx, m, env);
    }));
    Set<String> crashed = ConcurrentHashMap.newKeySet();
    l.crashAfterRetry = id -> crashed.add("once"); // the first retry only: its original is never acknowledged
    start(l);
    publisher().publish(Fixture.TOPIC, Fixture.envelope("fork"));
    // The retry copy takes effect; the original comes again when its lease
    // (10 s) ends, and its retry chain says it was retried: a duplicate.
    Fixture.waitFor("the copy handled and the original's return acknowledged",
        () -> l.handled() == 1 && l.deduplicated() == 1);
    Fixture.assertOneEach(fx.effects(), 1);
    assertEquals(1, l.retried(), "the original's return published no second retry");
  }

  @Test
  void anEnvelopeThatDoesNotDecodeIsDeadLettered() throws Exception {
    RocketConsumerLoop l = loop(Fixture.insert("java"));
    RocketPublisher pub = publisher();
    // The outbox relay's path: bytes that are no envelope are refused before the send.
    assertTrue(assertThrowsMessage(() -> pub.publish(Fixture.TOPIC, "k", new byte[] {(byte) 0xff, 1}))
        .contains("is not an envelope"));
    // A foreign producer's body (no envelope) reaches the loop: a decode dead letter.
    pub.sendRawForTests(fx.config().topicName(Fixture.TOPIC), new byte[] {(byte) 0xff, 1, 2});
    Fixture.waitFor("the dead letter", () -> l.deadLettered() == 1);
    assertEquals(0, l.handled());
  }

  private static String assertThrowsMessage(Runnable r) {
    try {
      r.run();
    } catch (RocketRuntimeException e) {
      return e.getMessage();
    }
    throw new AssertionError("no RocketRuntimeException");
  }
}
