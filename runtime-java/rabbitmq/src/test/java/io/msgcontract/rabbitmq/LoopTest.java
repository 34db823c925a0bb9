package io.msgcontract.rabbitmq;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.msgcontract.kafka.testpb.OrderNote;
import io.msgcontract.support.DeadLetterRecord;
import io.msgcontract.support.Envelopes;
import io.msgcontract.support.EventSpec;
import io.msgcontract.support.NonRetryableException;
import io.msgcontract.support.RetryPolicy;
import io.msgcontract.support.RetryableException;
import io.msgcontract.v1.Envelope;
import java.sql.Connection;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The consumer loop on the real broker: effects in SQLite, decisions read
 * back from the group's queue and P.dlq.
 */
class LoopTest extends BrokerTest {
  private String queue() {
    return fx.prefix + "/" + Fixture.GROUP + "/" + Fixture.TOPIC;
  }

  /** Waits until the group's queue holds nothing ready. */
  private void drained() throws InterruptedException {
    Fixture.waitFor("the group's queue empty", () -> {
      try {
        return Fixture.ready(queue()) == 0;
      } catch (Exception e) {
        return false;
      }
    });
  }

  private List<Fixture.Got> dlq(int n) throws Exception {
    Fixture.waitFor(n + " records in P.dlq", () -> {
      try {
        return Fixture.ready(fx.prefix + ".dlq") >= n;
      } catch (Exception e) {
        return false;
      }
    });
    return Fixture.drain(fx.prefix + ".dlq");
  }

  @Test
  void publishedEventsAreHandledOnce() throws Exception {
    RabbitConsumerLoop l = loop(Fixture.insert("java"));
    RabbitPublisher pub = publisher();
    for (int i = 0; i < 50; i++) {
      pub.publish(Fixture.envelope("p" + i));
    }
    Fixture.waitFor("50 handled", () -> l.handled() == 50);
    drained();
    Fixture.assertOneEach(fx.effects(), 50);
    assertEquals(0, l.retried() + l.deadLettered() + l.deduplicated());
  }

  @Test
  void duplicatesAreAcknowledgedWithoutAnEffect() throws Exception {
    RabbitConsumerLoop l = loop(Fixture.insert("java"));
    RabbitPublisher pub = publisher();
    for (int i = 0; i < 10; i++) {
      Envelope env = Fixture.envelope("d" + i);
      pub.publish(env);
      pub.publish(env); // the same envelope, as a producer's retry would send it: a fresh transport id
      pub.publish(env);
    }
    Fixture.waitFor("30 settled", () -> l.handled() + l.deduplicated() == 30);
    assertEquals(10, l.handled());
    assertEquals(20, l.deduplicated());
    Fixture.assertOneEach(fx.effects(), 10);
  }

  @Test
  void retryableFailureIsRetriedOnTheScheduleThenSucceeds() throws Exception {
    List<Envelope> seen = Collections.synchronizedList(new ArrayList<>());
    List<Long> runAt = Collections.synchronizedList(new ArrayList<>());
    RabbitConsumerLoop l = loop((tx, m, env) -> {
      seen.add(env);
      runAt.add(System.currentTimeMillis());
      if (env.getRetryCount() < 2) {
        throw new RetryableException(50001, "system", "ledger unavailable");
      }
      Fixture.insert("java").handle(tx, m, env);
    });
    publisher().publish(Fixture.envelope("r1"));
    Fixture.waitFor("handled after two retries", () -> l.handled() == 1);
    assertEquals(2, l.retried());
    assertEquals(Map.of("r1", 1), fx.effects());
    assertEquals(3, seen.size());
    for (int i = 1; i < 3; i++) {
      Envelope env = seen.get(i);
      assertEquals(i, env.getRetryCount());
      // POLICY: base 200 ms, x2, jitter 100 ms, cap 2 s: retry n waits base*2^(n-1) + [0, jitter)
      long delay = env.getNotBefore() - runAt.get(i - 1);
      long base = 200L << (i - 1);
      assertTrue(delay >= base && delay <= base + 100 + 50, "retry " + i + " delay " + delay + " ms, want ["
          + base + ", " + (base + 100) + ") plus the handler's time");
      assertTrue(runAt.get(i) >= env.getNotBefore(), "retry " + i + " ran " + (env.getNotBefore() - runAt.get(i))
          + " ms before its not_before");
      assertTrue(env.getLastError().getMessage().contains("ledger unavailable"), env.getLastError().toString());
    }
    drained();
  }

  @Test
  void exhaustedRetriesAreDeadLetteredWithTheSpecsRecord() throws Exception {
    EventSpec<OrderNote> fast = Fixture.spec(new RetryPolicy(20, 2.0, 10, 200, 3));
    RabbitConsumerLoop l = loop(fx.config(), fx::open, fast, (tx, m, env) -> {
      throw new RetryableException(50002, "system", "always down");
    });
    Envelope sent = Fixture.envelope("x1");
    publisher().publish(sent);
    List<Fixture.Got> recs = dlq(1);
    assertEquals(1, recs.size());
    Fixture.Got g = recs.get(0);
    assertTrue(g.messageId().matches("[0-9a-f]{16}-[0-9a-f]{8}"), g.messageId());
    assertEquals("application/json", g.contentType());
    assertEquals(Fixture.GROUP, g.headers().get("x-msgcontract-group").toString());
    assertEquals(Fixture.TOPIC, g.headers().get("x-msgcontract-topic").toString());
    DeadLetterRecord r = DeadLetterRecord.fromJson(g.text());
    assertEquals(g.messageId(), r.id());
    assertEquals("retries_exhausted", r.reason());
    assertEquals(50002, r.code());
    assertEquals(4, r.attempts());
    assertEquals(List.of(Fixture.TOPIC, Fixture.GROUP, Fixture.HANDLER, Fixture.EVENT_TYPE, "x1", sent.getMessageId()),
        List.of(r.topic(), r.group(), r.handler(), r.eventType(), r.bizKey(), r.messageId()));
    Envelope last = Envelopes.decode(r.envelope());
    assertEquals(3, last.getRetryCount(), "the envelope as delivered the last time");
    assertTrue(r.error().contains("always down"), r.error());
    assertTrue(r.firstFailedAt() != null && r.deadAt() != null && !r.firstFailedAt().isAfter(r.deadAt()));
    for (String field : List.of("\"id\":", "\"envelope\":\"", "\"first_failed_at\":", "\"last_failed_at\":",
        "\"dead_at\":", "\"replay_count\":0")) {
      assertTrue(g.text().contains(field), field + " missing in " + g.text());
    }
    assertFalse(g.text().contains("last_replayed_at"), "a time never set is left out: " + g.text());
    assertEquals(3, l.retried());
    assertEquals(1, l.deadLettered());
    drained();
  }

  @Test
  void nonRetryableFailureIsDeadLetteredAtOnce() throws Exception {
    RabbitConsumerLoop l = loop((tx, m, env) -> {
      throw new NonRetryableException(40001, "business", "order unknown");
    });
    publisher().publish(Fixture.envelope("n1"));
    DeadLetterRecord r = DeadLetterRecord.fromJson(dlq(1).get(0).text());
    assertEquals("non_retryable", r.reason());
    assertEquals(40001, r.code());
    assertEquals(1, r.attempts());
    assertEquals(0, l.retried());
    assertEquals(Map.of(), fx.effects());
  }

  @Test
  void undecodableBodyIsDeadLetteredAsDecode() throws Exception {
    RabbitConsumerLoop l = loop(Fixture.insert("java"));
    RabbitPublisher pub = publisher();
    byte[] junk = {(byte) 0xff, (byte) 0xff, (byte) 0xff};
    pub.publish(Fixture.TOPIC, junk);
    DeadLetterRecord r = DeadLetterRecord.fromJson(dlq(1).get(0).text());
    assertEquals("decode", r.reason());
    assertEquals(-3, r.code());
    assertEquals(0, r.attempts());
    assertEquals("", r.handler());
    assertTrue(java.util.Arrays.equals(junk, r.envelope()), "the delivered bytes, untouched");
    assertEquals(1, l.deadLettered());
  }

  @Test
  void ackOnlyAfterCommitAConnectionLostBeforeTheAckRedeliversWithOneEffect() throws Exception {
    // The first commit first kills the loop's AMQP connection: the
    // transaction commits, the ack cannot be sent, the broker delivers the
    // message again, and the claim makes the second run a duplicate.
    AtomicBoolean killed = new AtomicBoolean();
    RabbitConsumerLoop[] self = new RabbitConsumerLoop[1];
    AtomicInteger runs = new AtomicInteger();
    ConnectionFactory db = () -> {
      Connection c = fx.open();
      return Fixture.intercept(c, method -> {
        if (method.equals("commit") && killed.compareAndSet(false, true)) {
          self[0].publisherForTests().connection().abort();
        }
      });
    };
    self[0] = loop(fx.config(), db, Fixture.SPEC, (tx, m, env) -> {
      runs.incrementAndGet();
      Fixture.insert("java").handle(tx, m, env);
    });
    publisher().publish(Fixture.envelope("k1"));
    Fixture.waitFor("the redelivery deduplicated", () -> self[0].deduplicated() == 1);
    assertTrue(killed.get());
    assertEquals(1, self[0].handled());
    assertEquals(1, runs.get(), "the handler ran again: its first commit was not seen by the claim");
    assertEquals(Map.of("k1", 1), fx.effects());
    drained();
  }

  /**
   * One retry chain per message, keyed on the transport's message_id
   * (io.msgcontract.support.RetryChain): a crash between a retry's confirm
   * and the original's ack delivers the original again under the same
   * message_id, which the chain does not supersede (its retry might not have
   * been published), so it publishes a second copy of attempt 1; of the two
   * copies only one goes on, the other is settled as a duplicate.
   */
  @Test
  void aCrashBetweenRetryAndAckKeepsOneRetryChain() throws Exception {
    AtomicInteger originalRuns = new AtomicInteger();
    RabbitConsumerLoop l = new RabbitConsumerLoop(fx.config(), Fixture.GROUP, fx::open);
    AtomicBoolean crashed = new AtomicBoolean();
    l.crashAfterRetry = id -> crashed.compareAndSet(false, true);
    l.register(Fixture.SPEC, Fixture.HANDLER, (tx, m, env) -> {
      if (env.getRetryCount() == 0) {
        originalRuns.incrementAndGet();
        throw new RetryableException(50001, "system", "the original always fails");
      }
      Fixture.insert("java").handle(tx, m, env);
    });
    toClose.add(0, l);
    threads.add(Fixture.start(l, errors));
    Fixture.waitFor("the loop consuming", () -> l.consuming() || !errors.isEmpty());
    publisher().publish(Fixture.envelope("chain"));
    Fixture.waitFor("the retry copy handled", () -> l.handled() == 1);
    Fixture.waitFor("the second copy of attempt 1 settled as a duplicate", () -> l.deduplicated() == 1);
    assertTrue(crashed.get());
    assertEquals(2, originalRuns.get(), "the original was not delivered again after the crash");
    assertEquals(2, l.retried(), "the redelivery (same message_id) is the copy that went on: it publishes again");
    drained();
    assertEquals(1, l.handled(), "both copies of attempt 1 went on: the chain forked");
    assertEquals(1, l.deduplicated());
    assertEquals(Map.of("chain", 1), fx.effects());
    drained();
  }

  @Test
  void notYetDueMessageWaitsForItsNotBefore() throws Exception {
    List<Long> ranAt = Collections.synchronizedList(new ArrayList<>());
    RabbitConsumerLoop l = loop((tx, m, env) -> {
      ranAt.add(System.currentTimeMillis());
      Fixture.insert("java").handle(tx, m, env);
    });
    long nb = System.currentTimeMillis() + 300;
    publisher().publish(Fixture.envelope("later").toBuilder().setNotBefore(nb).build());
    Fixture.waitFor("handled", () -> l.handled() == 1);
    assertTrue(ranAt.get(0) >= nb, "ran " + (nb - ranAt.get(0)) + " ms early");
    assertTrue(l.deferred() >= 1, "not sent through a delay queue");
  }
}
