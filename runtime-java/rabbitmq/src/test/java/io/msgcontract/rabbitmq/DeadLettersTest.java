package io.msgcontract.rabbitmq;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.msgcontract.support.DeadLetterRecord;
import io.msgcontract.support.Envelopes;
import io.msgcontract.support.NonRetryableException;
import io.msgcontract.v1.Envelope;
import java.sql.Connection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;

/** RabbitDeadLetters (list, show, replay, purge) and the outbox relay on the real broker. */
class DeadLettersTest extends BrokerTest {
  @Test
  void listReplayAndPurge() throws Exception {
    Set<String> poisoned = ConcurrentHashMap.newKeySet();
    poisoned.add("a");
    poisoned.add("b");
    RabbitConsumerLoop l = loop((tx, m, env) -> {
      if (poisoned.contains(m.getValue())) {
        throw new NonRetryableException(40001, "business", "order unknown: " + m.getValue());
      }
      Fixture.insert("java").handle(tx, m, env);
    });
    RabbitPublisher pub = publisher();
    pub.publish(Fixture.envelope("a"));
    Fixture.waitFor("a dead-lettered", () -> l.deadLettered() == 1);
    pub.publish(Fixture.envelope("b"));
    Fixture.waitFor("b dead-lettered", () -> l.deadLettered() == 2);
    RabbitDeadLetters dlq = new RabbitDeadLetters(pub);
    List<DeadLetterRecord> recs = dlq.list(RabbitDeadLetters.Filter.ALL);
    assertEquals(List.of("a", "b"), recs.stream().map(DeadLetterRecord::bizKey).toList(), "oldest first");
    assertTrue(recs.get(0).id().compareTo(recs.get(1).id()) < 0);
    assertEquals(2, Fixture.ready(fx.prefix + ".dlq"), "list hands every record back");
    assertEquals("b", dlq.get(recs.get(1).id()).bizKey());
    assertEquals(List.of("b"), dlq.list(new RabbitDeadLetters.Filter(null, Fixture.GROUP, null, null, "b",
        "non_retryable", 0)).stream().map(DeadLetterRecord::bizKey).toList());
    assertThrows(RabbitDeadLetters.NotFoundException.class, () -> dlq.get("0000000000000000-00000000"));

    poisoned.remove("a"); // the fix is deployed: the replay succeeds
    dlq.replay(recs.get(0).id());
    Fixture.waitFor("the replay handled", () -> l.handled() == 1);
    assertEquals(Map.of("a", 1), fx.effects());
    List<DeadLetterRecord> after = dlq.list(RabbitDeadLetters.Filter.ALL);
    assertEquals(2, after.size());
    DeadLetterRecord replayed = after.stream().filter(r -> r.bizKey().equals("a")).findFirst().orElseThrow();
    assertEquals(1, replayed.replayCount());
    assertTrue(replayed.lastReplayedAt() != null);
    assertTrue(replayed.id().compareTo(recs.get(1).id()) > 0, "stored again under a new id");

    assertEquals(1, dlq.purge(new RabbitDeadLetters.Filter(null, null, null, null, "b", null, 0)));
    assertEquals(List.of("a"), dlq.list(RabbitDeadLetters.Filter.ALL).stream().map(DeadLetterRecord::bizKey).toList());
    assertEquals(1, dlq.purge(RabbitDeadLetters.Filter.ALL));
    assertEquals(0, Fixture.ready(fx.prefix + ".dlq"));
  }

  @Test
  void outboxRelayPublishesWithConfirmsAndMarksSent() throws Exception {
    RabbitConsumerLoop l = loop(Fixture.insert("java"));
    RabbitPublisher pub = publisher();
    try (Connection c = fx.open()) {
      c.setAutoCommit(false);
      for (int i = 0; i < 20; i++) {
        RabbitOutboxRelay.write(c, Fixture.envelope("o" + i));
      }
      c.commit();
    }
    RabbitOutboxRelay relay = new RabbitOutboxRelay(fx::open, pub, 10_000, 8);
    int sent = 0;
    for (int pass = 0; pass < 10 && sent < 20; pass++) {
      sent += relay.flush();
    }
    assertEquals(20, sent);
    try (Connection c = fx.open()) {
      assertEquals(0, RabbitOutboxRelay.pending(c));
    }
    Fixture.waitFor("20 handled", () -> l.handled() == 20);
    Fixture.assertOneEach(fx.effects(), 20);
    // A second relay is not the leader while the first's lease runs.
    assertEquals(0, new RabbitOutboxRelay(fx::open, pub, 10_000, 8).flush());
    Envelope one = Fixture.envelope("o-last");
    try (Connection c = fx.open()) {
      c.setAutoCommit(true);
      RabbitOutboxRelay.write(c, one);
    }
    assertEquals(1, relay.flush());
    Fixture.waitFor("the last one handled", () -> l.handled() == 21);
    assertEquals(one.getMessageId(), Envelopes.decode(Envelopes.encode(one)).getMessageId());
  }
}
