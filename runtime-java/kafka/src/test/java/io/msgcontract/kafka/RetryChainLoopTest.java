package io.msgcontract.kafka;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.msgcontract.kafka.testpb.OrderNote;
import io.msgcontract.support.ChainPos;
import io.msgcontract.support.Decision;
import io.msgcontract.support.Envelopes;
import io.msgcontract.support.Handler;
import io.msgcontract.support.RetryChain;
import io.msgcontract.support.RetryableException;
import io.msgcontract.v1.Envelope;
import io.msgcontract.v1.LastError;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

/**
 * One retry chain per message (docs/DESIGN.md; issue #42) on the real
 * broker: however a message's retry copies fork (the same copy stored
 * twice, a member crashed or killed between a retry's publish and its
 * offset commit, a Go member's chain followed by a Java member), its
 * messages that always fail are dead-lettered once each, at max_retries,
 * and the copies that another copy went on without are counted
 * deduplicated.
 */
class RetryChainLoopTest extends BrokerTest {
  private static final int MAX_RETRIES = Fixture.POLICY.maxRetries();

  private String retryTopic() {
    return fx.namespace + Fixture.TOPIC + ".retry." + Fixture.GROUP;
  }

  private String dlqTopic() {
    return fx.namespace + Fixture.TOPIC + ".dlq";
  }

  /** A handler that always fails, retryably, counting its runs. */
  private static Handler<OrderNote> failing(AtomicInteger runs) {
    return (tx, m, env) -> {
      runs.incrementAndGet();
      throw new RetryableException(50002, "system", "still down");
    };
  }

  /** A loop of the fixture's group; started by the caller (Fixture.start) once configured. */
  private KafkaConsumerLoop loop(KafkaConfig c, Handler<OrderNote> h) {
    KafkaConsumerLoop l = new KafkaConsumerLoop(c, Fixture.GROUP, fx::open);
    l.register(Fixture.SPEC, Fixture.HANDLER, h);
    toClose.add(l);
    return l;
  }

  private void start(KafkaConsumerLoop l) {
    threads.add(Fixture.start(l, errors));
  }

  private KafkaPublisher publisher() {
    KafkaPublisher p = new KafkaPublisher(fx.config());
    toClose.add(0, p);
    return p;
  }

  private void waitSettled() throws InterruptedException {
    Fixture.waitFor("every record committed", () -> fx.backlog() == 0);
  }

  /** The dead letters on T.dlq per message id. */
  private Map<String, Integer> deadLetters() throws Exception {
    Map<String, Integer> per = new TreeMap<>();
    for (ConsumerRecord<byte[], byte[]> r : Fixture.readAll(dlqTopic())) {
      Envelope env = Envelopes.decode(r.value());
      per.merge(env.getMessageId(), 1, Integer::sum);
      String meta = new String(r.headers().lastHeader("msgcontract.dlq").value(), StandardCharsets.UTF_8);
      assertEquals(MAX_RETRIES, env.getRetryCount(), "a dead letter's retry_count: " + meta);
      assertTrue(meta.contains("\"reason\":\"retries_exhausted\"") && meta.contains("\"attempts\":" + (MAX_RETRIES + 1)),
          meta);
    }
    return per;
  }

  /** Every message of ids has one dead letter, and nothing else is dead. */
  private void oneDeadLetterEach(Set<String> ids) throws Exception {
    Map<String, Integer> want = new TreeMap<>();
    ids.forEach(id -> want.put(id, 1));
    assertEquals(want, deadLetters(), "dead letters per message id");
  }

  /**
   * The attempt-1 retry copy of each message, stored twice with the same
   * bytes (what a member leaves that published it, was not acknowledged, and
   * published it again): the first copy goes on, the second is superseded
   * before its handler runs.
   */
  private void aRetryCopyStoredTwiceGoesOnOnce(KafkaConfig c) throws Exception {
    AtomicInteger runs = new AtomicInteger();
    KafkaConsumerLoop l = loop(c, failing(runs));
    start(l);
    Fixture.waitFor("the loop holds the retry topic", () -> fx.membersHolding(retryTopic()) == 1);
    KafkaPublisher pub = publisher();
    int n = 3;
    Set<String> ids = new HashSet<>();
    long now = System.currentTimeMillis();
    for (int i = 0; i < n; i++) {
      Envelope env = Fixture.envelope("twice" + i).toBuilder().setRetryCount(1).setNotBefore(now)
          .setFirstFailedAt(now).setLastError(LastError.newBuilder().setCode(50002).setMessage("still down")
              .setRetryable(true).setRange("system").setFailedAt(now))
          .build();
      ids.add(env.getMessageId());
      ProducerRecord<byte[], byte[]> rec = KafkaRecords.retry(fx.namespace, Fixture.GROUP, Fixture.TOPIC,
          new Decision.Retry(env, 0));
      pub.send(rec);
      pub.send(rec);
    }
    Fixture.waitFor("a dead letter per message", () -> l.deadLettered() >= n);
    waitSettled();
    oneDeadLetterEach(ids);
    assertEquals(n, l.deadLettered());
    assertEquals(n, l.deduplicated(), "the second copy of each message");
    assertEquals(n * (MAX_RETRIES - 1), l.retried(), "retries 2 and 3 of each message, once each");
    assertEquals(n * MAX_RETRIES, runs.get(), "attempts 1 to 3 of each message, once each");
  }

  /** Batched: the first copies of the keys share a transaction; the chain advances after it. */
  @Test
  void aRetryCopyStoredTwiceGoesOnOnce() throws Exception {
    aRetryCopyStoredTwiceGoesOnOnce(fx.config());
  }

  /** A transaction per delivery: Consumer.process looks the copy up and advances the chain itself. */
  @Test
  void aRetryCopyStoredTwiceGoesOnOnceWithBatchSizeOne() throws Exception {
    KafkaConfig c = fx.config();
    c.batchSize = 1;
    aRetryCopyStoredTwiceGoesOnOnce(c);
  }

  /**
   * Every retry of every delivery acts out a crash between its publish and
   * its settle (the delivery runs again, as it would at the partition's next
   * owner, and publishes a second copy of the same attempt), as runtime-go's
   * TestRetryChainFork does: each level forks, and still each message is
   * dead-lettered once; without the chain it would be 2^3 times.
   */
  @Test
  void everyRetryForkedStillOneDeadLetterPerMessage() throws Exception {
    AtomicInteger runs = new AtomicInteger();
    KafkaConsumerLoop l = loop(fx.config(), failing(runs));
    Set<String> crashed = ConcurrentHashMap.newKeySet();
    l.crashAfterRetry = crashed::add; // the first retry of each stored copy "crashes"
    start(l);
    KafkaPublisher pub = publisher();
    int n = 4;
    Set<String> ids = new HashSet<>();
    for (int i = 0; i < n; i++) {
      Envelope env = Fixture.envelope("forked" + i);
      ids.add(env.getMessageId());
      pub.publish(env);
    }
    Fixture.waitFor("a dead letter per message", () -> l.deadLettered() >= n);
    waitSettled();
    oneDeadLetterEach(ids);
    // The records of a key run in arrival order, so each level forks the
    // same way: the crashed copy runs again and publishes the level's second
    // copy, which is superseded by the first.
    assertEquals(n * MAX_RETRIES, crashed.size(), "crashes: the first delivery and retries 1 and 2 of each message");
    assertEquals(n * MAX_RETRIES, l.deduplicated(), "the second copy of retries 1 to 3 of each message");
    assertEquals(2 * n * MAX_RETRIES, l.retried(), "two copies of each retry published");
    assertEquals(n, l.deadLettered());
  }

  /**
   * A consumer process SIGKILLed after it published a retry copy and before
   * it committed the failed record's offset: the next owner handles the
   * record again and publishes a second copy of attempt 1, and the two
   * copies go on as one chain.
   */
  @Test
  void aMemberKilledBetweenItsRetryPublishAndItsCommitForksNoChain() throws Exception {
    KafkaPublisher pub = publisher();
    int n = 3;
    Set<String> ids = new HashSet<>();
    for (int i = 0; i < n; i++) {
      Envelope env = Fixture.envelope("killed" + i);
      ids.add(env.getMessageId());
      pub.publish(env);
    }
    Path ready = fx.dir.resolve("ready");
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    Process child = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"),
        ChainChild.class.getName(), fx.namespace, fx.dbFile.toString(), ready.toString())
        .redirectOutput(ProcessBuilder.Redirect.DISCARD)
        .redirectError(fx.dir.resolve("child.log").toFile())
        .start();
    try {
      Fixture.waitFor("the child between a retry publish and its commit", () -> Files.exists(ready) || !child.isAlive());
      assertTrue(child.isAlive(), "the child died before its first retry: " + Files.readString(
          fx.dir.resolve("child.log")));
      child.destroyForcibly(); // SIGKILL on Linux
      assertTrue(child.waitFor(60, TimeUnit.SECONDS));
      assertEquals(128 + 9, child.exitValue(), "the child was not ended by SIGKILL");
    } finally {
      child.destroyForcibly();
    }
    assertEquals(1, Fixture.readAll(retryTopic()).size(), "the child's one retry copy");
    AtomicInteger runs = new AtomicInteger();
    KafkaConsumerLoop l = loop(fx.config(), failing(runs));
    start(l);
    Fixture.waitFor("a dead letter per message", () -> l.deadLettered() >= n);
    waitSettled();
    oneDeadLetterEach(ids);
    assertEquals(1, l.deduplicated(), "one of the killed message's two copies of attempt 1 (or its record, "
        + "handled again after the child's copy went on)");
    assertEquals(n, l.deadLettered());
  }

  /**
   * A Go member (runtime-go/bench/kafkapeer, whose insert a trigger makes
   * fail always) runs each message's chain to its dead letter; the commits of
   * the messages' records are then lost (the group's offsets on T set back,
   * as when a member dies after publishing a retry copy and before
   * committing), and a Java member takes the records over. The Java member
   * finds the Go member's chain in the shared table: each record, handled
   * again, is superseded, and no second chain starts.
   */
  @Test
  void aJavaMemberFollowsTheChainOfAGoMember() throws Exception {
    try (Connection c = fx.open(); Statement st = c.createStatement()) {
      st.execute("CREATE TRIGGER doomed BEFORE INSERT ON effects WHEN NEW.biz_key LIKE 'doomed%' "
          + "BEGIN SELECT RAISE(ABORT, 'doomed: always fails'); END");
    }
    File log = fx.dir.resolve("go.log").toFile();
    Process go = new ProcessBuilder(Fixture.env("MSGCONTRACT_KAFKA_GO_PEER"), "-brokers", Fixture.brokers(),
        "-db", fx.dbFile.toString(), "-namespace", fx.namespace, "-group", Fixture.GROUP, "-topic", Fixture.TOPIC,
        "-event-type", Fixture.EVENT_TYPE, "-handler", Fixture.HANDLER, "-note", "go")
        .redirectErrorStream(true).redirectOutput(log).start();
    int n = 3;
    Set<String> ids = new HashSet<>();
    try {
      Fixture.waitFor("the Go member holds the topic",
          () -> fx.membersHolding(fx.namespace + Fixture.TOPIC) == 1 || !go.isAlive());
      assertTrue(go.isAlive(), "the Go member exited: " + Files.readString(log.toPath()));
      KafkaPublisher pub = publisher();
      for (int i = 0; i < n; i++) {
        Envelope env = Fixture.envelope("doomed" + i);
        ids.add(env.getMessageId());
        pub.publish(env);
      }
      Fixture.waitFor("the Go member's dead letters", () -> {
        try {
          return Fixture.readAll(dlqTopic()).size() >= n;
        } catch (InterruptedException e) {
          throw new IllegalStateException(e);
        }
      });
      waitSettled();
    } finally {
      go.destroy(); // SIGTERM: the Go consumer closes and leaves the group
      go.waitFor(60, TimeUnit.SECONDS);
    }
    oneDeadLetterEach(ids);
    // Go names a copy as Java does: each chain row holds the id Java gives the message's last retry copy.
    Map<String, String> lastCopy = new HashMap<>();
    for (ConsumerRecord<byte[], byte[]> r : Fixture.readAll(retryTopic())) {
      Envelope env = Envelopes.decode(r.value());
      if (env.getRetryCount() == MAX_RETRIES) {
        lastCopy.put(env.getMessageId(), KafkaRecords.deliveryId(r));
      }
    }
    try (Connection c = fx.open()) {
      for (String id : ids) {
        assertEquals(new ChainPos(0, MAX_RETRIES, lastCopy.get(id)), RetryChain.row(c, Fixture.HANDLER, id));
      }
    }
    Fixture.waitFor("the group empty", () -> fx.members() == 0);
    try (Admin a = Admin.create(Map.of("bootstrap.servers", Fixture.brokers()))) {
      String topic = fx.namespace + Fixture.TOPIC;
      Map<TopicPartition, OffsetAndMetadata> back = new HashMap<>();
      for (var p : a.describeTopics(List.of(topic)).allTopicNames().get().get(topic).partitions()) {
        back.put(new TopicPartition(topic, p.partition()), new OffsetAndMetadata(0));
      }
      a.alterConsumerGroupOffsets(fx.namespace + Fixture.GROUP, back).all().get();
    }
    assertEquals(n, fx.backlog(), "the records' commits were not set back");
    AtomicInteger runs = new AtomicInteger();
    Handler<OrderNote> write = KafkaLoopTest.insert("java");
    KafkaConsumerLoop l = loop(fx.config(), (tx, m, env) -> {
      runs.incrementAndGet();
      write.handle(tx, m, env);
    });
    start(l);
    Fixture.waitFor("each record handled again", () -> l.deduplicated() + l.retried() + l.deadLettered() >= n);
    waitSettled();
    oneDeadLetterEach(ids);
    assertEquals(n, runs.get(), "a first delivery is not looked up: each handler ran once, and failed");
    assertEquals(n, l.deduplicated(), "each record superseded by the Go member's chain");
    assertEquals(0, l.retried());
    assertEquals(0, l.deadLettered());
    assertEquals(Map.of(), fx.effects());
  }
}
