package io.msgcontract.rabbitmq;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.msgcontract.support.DeadLetterRecord;
import io.msgcontract.support.Envelopes;
import io.msgcontract.support.NonRetryableException;
import io.msgcontract.support.RetryableException;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Java and Go members on one broker, one prefix and one SQLite business
 * database: runtime-go's rabbitmq transport in the Go peer
 * (integration/javarabbitmq/rabbitmqpeer, MSGCONTRACT_RABBITMQ_GO_PEER) and
 * the msgcontract CLI (MSGCONTRACT_BIN), both built by TestJavaRabbitMQ.
 */
class InteropTest extends BrokerTest {
  private final List<Process> peers = new ArrayList<>();

  @AfterEach
  void stopPeers() throws Exception {
    for (Process p : peers) {
      p.destroy(); // SIGTERM: the Go consumer closes, its unacknowledged deliveries go back
      p.waitFor(60, TimeUnit.SECONDS);
      p.destroyForcibly();
    }
  }

  private List<String> peer(String mode, String... more) {
    List<String> cmd = new ArrayList<>(List.of(Fixture.env("MSGCONTRACT_RABBITMQ_GO_PEER"), mode, "-url",
        Fixture.url(), "-prefix", fx.prefix, "-topic", Fixture.TOPIC, "-event-type", Fixture.EVENT_TYPE));
    cmd.addAll(List.of(more));
    return cmd;
  }

  /** Starts the Go consumer of Fixture.GROUP on the fixture's database and waits until its queue exists. */
  private Process goConsumer(String... more) throws Exception {
    List<String> cmd = peer("consume", "-db", fx.dbFile.toString(), "-group", Fixture.GROUP, "-handler",
        Fixture.HANDLER, "-note", "go");
    cmd.addAll(List.of(more));
    File log = fx.dir.resolve("go-" + peers.size() + ".log").toFile();
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log).start();
    peers.add(p);
    Fixture.waitFor("the Go member running", () -> {
      try {
        return !p.isAlive() || Files.readString(log.toPath()).contains("rabbitmqpeer: running");
      } catch (Exception e) {
        return false;
      }
    });
    assertTrue(p.isAlive(), "the Go member exited: " + Files.readString(log.toPath()));
    return p;
  }

  private static String run(List<String> cmd) throws Exception {
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertEquals(0, p.waitFor(), String.join(" ", cmd) + ":\n" + out);
    return out;
  }

  @Test
  void goPublishesJavaConsumes() throws Exception {
    RabbitConsumerLoop l = loop(Fixture.insert("java"));
    run(peer("publish", "-n", "20", "-key-prefix", "go-"));
    Fixture.waitFor("20 handled", () -> l.handled() == 20);
    Map<String, Integer> effects = fx.effects();
    Fixture.assertOneEach(effects, 20);
    assertTrue(effects.containsKey("go-0") && effects.containsKey("go-19"), effects.toString());
  }

  @Test
  void javaPublishesGoConsumes() throws Exception {
    goConsumer();
    RabbitPublisher pub = publisher();
    for (int i = 0; i < 20; i++) {
      pub.publish(Fixture.envelope("java-" + i));
    }
    Fixture.waitFor("20 effects", () -> fx.effects().size() == 20);
    Fixture.assertOneEach(fx.effects(), 20);
    assertEquals(Set.of("go"), fx.notes());
  }

  @Test
  void goAndJavaMembersOfOneGroupShareItsQueueAndApplyEachMessageOnce() throws Exception {
    // Each side fails some values once (retryably), so each publishes retry
    // copies into the one group queue, which either member may then take.
    Set<String> failedOnce = ConcurrentHashMap.newKeySet();
    RabbitConsumerLoop l = loop((tx, m, env) -> {
      Thread.sleep(2); // a share for the Go member too, however fast the Java one is
      if (m.getValue().endsWith("3") && failedOnce.add(m.getValue())) {
        throw new RetryableException(50001, "system", "fails once in Java");
      }
      Fixture.insert("java").handle(tx, m, env);
    });
    goConsumer();
    RabbitPublisher pub = publisher();
    int n = 300;
    for (int i = 0; i < n; i++) {
      var env = Fixture.envelope("s" + i);
      pub.publish(env);
      if (i % 5 == 0) {
        pub.publish(env); // a duplicate, as a producer's retry would send it
      }
    }
    Fixture.waitFor("an effect per message", () -> fx.effects().size() == n);
    Fixture.waitFor("the group's queue drained", () -> {
      try {
        return Fixture.ready(fx.prefix + "/" + Fixture.GROUP + "/" + Fixture.TOPIC) == 0;
      } catch (Exception e) {
        return false;
      }
    });
    Thread.sleep(1000); // late duplicates would show up now
    Fixture.assertOneEach(fx.effects(), n);
    assertEquals(Set.of("go", "java"), fx.notes(), "both members should have handled messages");
    assertTrue(l.retried() > 0, "the Java member published no retry");
  }

  @Test
  void javaDeadLetterIsListedByTheCli() throws Exception {
    RabbitConsumerLoop l = loop((tx, m, env) -> {
      throw new NonRetryableException(40001, "business", "order unknown");
    });
    publisher().publish(Fixture.envelope("poison-java"));
    Fixture.waitFor("dead-lettered", () -> l.deadLettered() == 1);
    String id = new RabbitDeadLetters(publisher()).list(RabbitDeadLetters.Filter.ALL).get(0).id();
    String bin = Fixture.env("MSGCONTRACT_BIN");
    String out = run(List.of(bin, "dlq", "list", "--rabbitmq", Fixture.url(), "--prefix", fx.prefix));
    String line = out.lines().filter(s -> s.contains(id)).findFirst().orElse("");
    assertTrue(line.contains("non_retryable") && line.contains("40001") && line.contains(Fixture.GROUP), out);
    String shown = run(List.of(bin, "dlq", "show", "--rabbitmq", Fixture.url(), "--prefix", fx.prefix, id));
    assertTrue(shown.contains(Fixture.HANDLER) && shown.contains("order unknown") && shown.contains("poison-java"),
        shown);
  }

  @Test
  void goDeadLetterIsReadAndReplayedByJava() throws Exception {
    goConsumer("-poison-suffix", "-bad");
    RabbitPublisher pub = publisher();
    var sent = Fixture.envelope("x-bad");
    pub.publish(sent);
    Fixture.waitFor("Go's dead letter in P.dlq", () -> {
      try {
        return Fixture.ready(fx.prefix + ".dlq") == 1;
      } catch (Exception e) {
        return false;
      }
    });
    RabbitDeadLetters dlq = new RabbitDeadLetters(pub);
    List<DeadLetterRecord> recs = dlq.list(RabbitDeadLetters.Filter.ALL);
    assertEquals(1, recs.size());
    DeadLetterRecord r = recs.get(0);
    assertTrue(r.id().matches("[0-9a-f]{16}-[0-9a-f]{8}"), r.id());
    assertEquals(List.of(Fixture.TOPIC, Fixture.GROUP, Fixture.HANDLER, Fixture.EVENT_TYPE, "x-bad",
        sent.getMessageId(), "non_retryable"), List.of(r.topic(), r.group(), r.handler(), r.eventType(), r.bizKey(),
        r.messageId(), r.reason()));
    assertEquals(40001, r.code());
    assertEquals(1, r.attempts());
    assertEquals("x-bad", Envelopes.decode(r.envelope()).getBizKey());
    assertTrue(r.deadAt() != null && r.firstFailedAt() != null, r.toString());
    // Java replays Go's record: the Go member takes it again (and fails it again).
    dlq.replay(r.id());
    Fixture.waitFor("the replay dead-lettered again by Go", () -> {
      List<DeadLetterRecord> now = dlq.list(RabbitDeadLetters.Filter.ALL);
      return now.size() == 2 && now.stream().anyMatch(x -> x.replayCount() == 1);
    });
    assertEquals(2, dlq.purge(RabbitDeadLetters.Filter.ALL));
  }
}
