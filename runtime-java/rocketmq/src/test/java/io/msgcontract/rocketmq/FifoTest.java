package io.msgcontract.rocketmq;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.msgcontract.kafka.testpb.OrderNote;
import io.msgcontract.support.Consumer;
import io.msgcontract.support.Decision;
import io.msgcontract.support.EventSpec;
import io.msgcontract.support.Handler;
import io.msgcontract.support.RetryPolicy;
import io.msgcontract.support.RetryableException;
import io.msgcontract.v1.Envelope;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;

/**
 * FIFO topics and groups (issue 38): a biz_key's messages reach the handlers
 * one at a time in publish order, while other keys go on; a retry copy
 * leaves the line. Every message is published before the loop starts, so
 * receives bring several of a key at once (a new group of a fresh topic
 * starts at its first message). The payload is "key#n" and the biz_key
 * "key": the claim of (biz_key, handler) goes to the first message handled,
 * and the later ones are deduplicated.
 */
class FifoTest extends BrokerTest {
  static final String FIFO_TOPIC = "orders_fifo";

  /** One delivery as the loop's consumer decided it, in that order. */
  record Seen(Envelope env, Decision decision, long atMs, long retriedBefore) {}

  private final List<Seen> seen = Collections.synchronizedList(new ArrayList<>());
  private final Map<String, List<String>> handledValues = new ConcurrentHashMap<>();

  /** The fixture's config with FIFO_TOPIC a FIFO topic and Fixture.GROUP a FIFO group. */
  private RocketConfig fifoConfig(String topic) {
    RocketConfig c = fx.config();
    c.fifoTopics = List.of(topic);
    c.fifoGroups = List.of(Fixture.GROUP);
    c.batchSize = 8;
    return c;
  }

  /** The event on topic whose biz_key is its value up to '#'. */
  private static EventSpec<OrderNote> keyedSpec(String topic, RetryPolicy policy) {
    return Fixture.spec(topic, policy, m -> m.getValue().split("#")[0]);
  }

  /** Starts a loop of Fixture.GROUP that records what its consumer decided (seen) and what h handled. */
  private RocketConsumerLoop fifoLoop(RocketConfig c, EventSpec<OrderNote> spec, Handler<OrderNote> h)
      throws InterruptedException {
    RocketConsumerLoop l = new RocketConsumerLoop(c, Fixture.GROUP, fx::open);
    l.register(spec, Fixture.HANDLER, new Consumer<>(spec, Fixture.HANDLER, (tx, m, env) -> {
      h.handle(tx, m, env);
      handledValues.computeIfAbsent(env.getBizKey(), k -> Collections.synchronizedList(new ArrayList<>()))
          .add(m.getValue());
    }).withObserver(o -> seen.add(new Seen(o.envelope(), o.decision(), System.currentTimeMillis(), l.retried()))));
    return start(l);
  }

  /** Per biz_key, the message ids the consumer decided, each once, in the order it first decided them. */
  private Map<String, List<String>> decidedOrder() {
    Map<String, List<String>> m = new LinkedHashMap<>();
    synchronized (seen) {
      for (Seen s : seen) {
        List<String> ids = m.computeIfAbsent(s.env().getBizKey(), k -> new ArrayList<>());
        if (!ids.contains(s.env().getMessageId())) {
          ids.add(s.env().getMessageId());
        }
      }
    }
    return m;
  }

  @Test
  void aKeysMessagesAreHandledInPublishOrder() throws Exception {
    fx.fifoTopics(FIFO_TOPIC, Fixture.GROUP);
    RocketConfig c = fifoConfig(FIFO_TOPIC);
    EventSpec<OrderNote> spec = keyedSpec(FIFO_TOPIC, Fixture.POLICY);
    int keys = 20;
    int rounds = 3;
    Map<String, List<String>> published = new LinkedHashMap<>();
    RocketPublisher pub = publisher(c);
    for (int r = 0; r < rounds; r++) { // interleaved: every key's first, then every key's second, ...
      for (int k = 0; k < keys; k++) {
        // f0 is the longest group the proxy takes (63 bytes), f1 one it refuses (64), which travels hashed.
        String key = k < 2 ? ("f" + k + "-".repeat(61 + k)) : "f" + k;
        Envelope env = Fixture.envelope(spec, key + "#" + r);
        pub.publish(FIFO_TOPIC, env);
        published.computeIfAbsent(key, x -> new ArrayList<>()).add(env.getMessageId());
      }
    }
    RocketConsumerLoop l = fifoLoop(c, spec, Fixture.insert("java"));
    Fixture.waitFor("a handled and " + (rounds - 1) + " deduplicated messages per key",
        () -> l.handled() == keys && l.deduplicated() == keys * (rounds - 1));
    assertEquals(published, decidedOrder(), "per biz_key, the message ids in the order the loop decided them");
    Map<String, String> claims = fx.claims(Fixture.HANDLER);
    for (String k : published.keySet()) {
      assertEquals(published.get(k).get(0), claims.get(k), "the claim of " + k + " is its first message's");
      assertEquals(List.of(k + "#0"), handledValues.get(k), "what the handler ran for " + k);
    }
    assertEquals(0, l.retried() + l.deadLettered() + l.expired());
  }

  @Test
  void aRetryCopyLeavesTheLineAndRunsAtItsNotBefore() throws Exception {
    fx.fifoTopics(FIFO_TOPIC, Fixture.GROUP);
    RocketConfig c = fifoConfig(FIFO_TOPIC);
    // 2 s (±100 ms) before the copy is due: through the broker's timer, and long after the next message ran.
    EventSpec<OrderNote> spec = keyedSpec(FIFO_TOPIC, new RetryPolicy(2000, 2.0, 100, 4000, 3));
    RocketPublisher pub = publisher(c);
    Map<String, List<String>> published = new LinkedHashMap<>();
    // 8 messages, one receive's worth: fail#1 is held in the loop while fail#0 runs, not by the broker.
    for (int r = 0; r < 2; r++) {
      for (String k : List.of("fail", "g0", "g1", "g2")) {
        Envelope env = Fixture.envelope(spec, k + "#" + r);
        pub.publish(FIFO_TOPIC, env);
        published.computeIfAbsent(k, x -> new ArrayList<>()).add(env.getMessageId());
      }
    }
    RocketConsumerLoop l = fifoLoop(c, spec, (tx, m, env) -> {
      if (m.getValue().equals("fail#0")) {
        throw new RetryableException(50001, "system", "once");
      }
      Fixture.insert("java").handle(tx, m, env);
    });
    String first = published.get("fail").get(0);
    Fixture.waitFor("fail#0's retry copy decided", () -> {
      synchronized (seen) {
        return seen.stream().anyMatch(s -> s.env().getMessageId().equals(first) && s.env().getRetryCount() == 1);
      }
    });
    Fixture.waitFor("4 handled (fail#1, g*#0) and 4 deduplicated (g*#1, the copy)",
        () -> l.handled() == 4 && l.deduplicated() == 4);
    List<Seen> fail;
    synchronized (seen) {
      fail = seen.stream().filter(s -> s.env().getBizKey().equals("fail")).toList();
    }
    // fail#0 failed; fail#1 ran once the copy was stored, not behind the copy; the copy ran at its not_before,
    // a duplicate by then.
    assertEquals(List.of("fail#0/0 Retry", "fail#1/0 Ack", "fail#0/1 Ack"), fail.stream()
        .map(s -> (s.env().getMessageId().equals(first) ? "fail#0/" : "fail#1/") + s.env().getRetryCount() + " "
            + s.decision().getClass().getSimpleName()).toList(), "fail's deliveries as decided");
    Seen next = fail.get(1);
    Seen copy = fail.get(2);
    assertEquals(1, next.retriedBefore(), "fail#1 ran before fail#0's retry copy was stored");
    assertTrue(next.atMs() < copy.env().getNotBefore(), "fail#1 waited for the retry copy's not_before "
        + copy.env().getNotBefore() + ": ran at " + next.atMs());
    assertTrue(copy.atMs() >= copy.env().getNotBefore(), "the retry copy ran "
        + (copy.env().getNotBefore() - copy.atMs()) + " ms before its not_before");
    assertEquals(new Decision.Ack(true), copy.decision(), "the copy after fail#1 took the claim");
    assertEquals(List.of("fail#1"), handledValues.get("fail"));
    Map<String, String> claims = fx.claims(Fixture.HANDLER);
    assertEquals(published.get("fail").get(1), claims.get("fail"));
    for (String k : List.of("g0", "g1", "g2")) {
      assertEquals(published.get(k), decidedOrder().get(k), "the order " + k + "'s messages were decided in");
      assertEquals(published.get(k).get(0), claims.get(k), "the claim of " + k);
    }
    assertEquals(1, l.retried());
  }

  @Test
  void goPublishesToAFifoTopicAndTheLoopKeepsKeyOrder() throws Exception {
    // runtime-go's member picks a queue by the biz_key (no message group); the topic is FIFO all the same.
    fx.fifoTopics(Fixture.TOPIC, Fixture.GROUP);
    int keys = 10;
    for (int round = 0; round < 2; round++) { // the same keys twice: the first round's are the earlier messages
      Fixture.run(fx.peer("publish", "-fifo-topic", Fixture.TOPIC, "-n", Integer.toString(keys), "-key-prefix",
          "go-"));
    }
    RocketConsumerLoop l = fifoLoop(fifoConfig(Fixture.TOPIC), Fixture.SPEC, Fixture.insert("java"));
    Fixture.waitFor(keys + " handled and " + keys + " deduplicated",
        () -> l.handled() == keys && l.deduplicated() == keys);
    Map<String, String> claims = fx.claims(Fixture.HANDLER);
    Map<String, List<Seen>> byKey = new LinkedHashMap<>();
    synchronized (seen) {
      seen.forEach(s -> byKey.computeIfAbsent(s.env().getBizKey(), k -> new ArrayList<>()).add(s));
    }
    assertEquals(keys, byKey.size(), byKey.keySet().toString());
    byKey.forEach((k, s) -> {
      assertEquals(2, s.size(), k + ": " + s);
      assertTrue(s.get(0).env().getOccurredAt() < s.get(1).env().getOccurredAt(), k + " decided out of order: " + s);
      assertEquals(s.get(0).env().getMessageId(), claims.get(k), "the claim of " + k);
    });
  }
}
