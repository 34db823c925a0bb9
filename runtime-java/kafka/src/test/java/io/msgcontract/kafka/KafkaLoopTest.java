package io.msgcontract.kafka;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.msgcontract.kafka.testpb.OrderNote;
import io.msgcontract.observe.Tracing;
import io.msgcontract.support.Consumer;
import io.msgcontract.support.Envelopes;
import io.msgcontract.support.Handler;
import io.msgcontract.support.NonRetryableException;
import io.msgcontract.support.RetryableException;
import io.msgcontract.v1.Envelope;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.context.Scope;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;

/**
 * The consumer loop, the outbox and the relay against the real broker of
 * scripts/with-kafka.sh: effects in SQLite, decisions read back from the
 * group's committed offsets and the retry and dead-letter topics.
 */
class KafkaLoopTest extends BrokerTest {
  /** The handler every test uses: one row per run, the effect the dedup must keep single. */
  static Handler<OrderNote> insert(String note) {
    return insert(note, OrderNote::getValue);
  }

  /** Like {@link #insert(String)} for any event: key gives the effect's key. */
  static <M> Handler<M> insert(String note, Function<M, String> key) {
    return (tx, m, env) -> {
      try (PreparedStatement st = tx.prepareStatement("INSERT INTO effects (biz_key, note) VALUES (?, ?)")) {
        st.setString(1, key.apply(m));
        st.setString(2, note);
        st.executeUpdate();
      }
    };
  }

  private KafkaConsumerLoop loop(Handler<OrderNote> h) {
    return loop(fx.config(), fx::open, h);
  }

  private KafkaConsumerLoop loop(KafkaConfig c, ConnectionFactory db, Handler<OrderNote> h) {
    KafkaConsumerLoop l = new KafkaConsumerLoop(c, Fixture.GROUP, db);
    l.register(Fixture.SPEC, Fixture.HANDLER, h);
    toClose.add(l);
    threads.add(Fixture.start(l, errors));
    return l;
  }

  /**
   * Connections of fx that count their commits; the first failCommits
   * commits fail (nothing is committed) as a lost connection's would.
   */
  private ConnectionFactory counting(AtomicInteger commits, AtomicInteger failCommits) {
    return () -> Fixture.intercept(fx.open(), method -> {
      if (method.equals("commit")) {
        if (failCommits.getAndDecrement() > 0) {
          throw new SQLException("injected: the commit failed");
        }
        commits.incrementAndGet();
      }
      return false;
    });
  }

  /**
   * Twelve keys published before the loop starts, so that its polls return
   * several at once; b5's first run writes its effect and then fails
   * (retryable). Returns the commits the loop made.
   */
  private int twelveKeysOneFailingOnce(KafkaConfig c) throws Exception {
    KafkaPublisher pub = publisher();
    for (int i = 0; i < 12; i++) {
      pub.publish(Fixture.envelope("b" + i));
    }
    AtomicInteger commits = new AtomicInteger();
    AtomicInteger b5runs = new AtomicInteger();
    Handler<OrderNote> write = insert("java");
    KafkaConsumerLoop l = loop(c, counting(commits, new AtomicInteger()), (tx, m, env) -> {
      write.handle(tx, m, env);
      if (m.getValue().equals("b5") && b5runs.incrementAndGet() == 1) {
        throw new RetryableException(50001, "system", "ledger unavailable");
      }
    });
    Fixture.waitFor("twelve handled", () -> l.handled() == 12);
    waitSettled();
    assertEquals(1, l.retried());
    assertEquals(2, b5runs.get());
    Map<String, Integer> want = new java.util.HashMap<>();
    for (int i = 0; i < 12; i++) {
      want.put("b" + i, 1);
    }
    assertEquals(want, fx.effects(), "b5's failed run took back its own write (savepoint), nobody else's");
    return commits.get();
  }

  /** By default the ready deliveries of several keys share a transaction, each in a savepoint. */
  @Test
  void readyDeliveriesShareACommitAndAFailingOneRollsBackAlone() throws Exception {
    int commits = twelveKeysOneFailingOnce(fx.config());
    // 12 with a transaction each (11 and b5's retry); 12 keys on the fixture's
    // 3 partitions put four on one at least, which one poll returns together.
    assertTrue(commits < 12, "12 deliveries took " + commits + " commits: no transaction was shared");
  }

  /** batchSize 1 gives every delivery a transaction of its own (Go's PerMessageTx). */
  @Test
  void batchSizeOneCommitsEveryDeliveryAlone() throws Exception {
    KafkaConfig c = fx.config();
    c.batchSize = 1;
    assertEquals(12, twelveKeysOneFailingOnce(c), "11 deliveries and b5's retry, a commit each");
  }

  /** A failed commit hands the whole transaction's deliveries back: they run again, each applied once. */
  @Test
  void aFailedCommitHandsEveryDeliveryBack() throws Exception {
    KafkaPublisher pub = publisher();
    for (int i = 0; i < 6; i++) {
      pub.publish(Fixture.envelope("c" + i));
    }
    AtomicInteger failCommits = new AtomicInteger(1);
    KafkaConsumerLoop l = loop(fx.config(), counting(new AtomicInteger(), failCommits), insert("java"));
    Fixture.waitFor("six handled", () -> l.handled() == 6);
    waitSettled();
    assertTrue(failCommits.get() < 0, "the injected commit failure was never reached");
    assertEquals(0, l.deduplicated(), "a handed-back delivery's claim was rolled back with it");
    assertEquals(0, l.retried(), "a database failure is not the message's: no retry counted");
    assertEquals(Map.of("c0", 1, "c1", 1, "c2", 1, "c3", 1, "c4", 1, "c5", 1), fx.effects());
  }

  private KafkaPublisher publisher() {
    return publisher(fx.config());
  }

  private KafkaPublisher publisher(KafkaConfig c) {
    KafkaPublisher p = new KafkaPublisher(c);
    toClose.add(0, p);
    return p;
  }

  /**
   * Publishes recs; once more through a new producer if the first attempt
   * expired. Twice under heavy machine load a fresh 6-partition topic left one
   * partition's batch unacknowledged until the delivery timeout; what these
   * tests check is the consumer side, and a second copy is a duplicate the
   * dedup absorbs (handled() does not count it).
   */
  private void sendAll(List<org.apache.kafka.clients.producer.ProducerRecord<byte[], byte[]>> recs) {
    KafkaConfig c = fx.config();
    c.publishTimeoutMs = 30_000; // a stalled batch is retried after 30 s, not the 120 s wait
    try {
      publisher(c).sendAll(recs);
    } catch (KafkaRuntimeException e) {
      System.err.println("publish failed, once more with a new producer: " + e.getMessage());
      publisher(c).sendAll(recs);
    }
  }

  private void waitSettled() throws InterruptedException {
    Fixture.waitFor("every record committed", () -> fx.backlog() == 0);
  }

  @Test
  void outboxRelayAndHandledOnce() throws Exception {
    KafkaPublisher pub = publisher();
    try (Connection tx = fx.open()) {
      tx.setAutoCommit(false);
      Outbox.write(tx, Fixture.envelope("a"));
      Outbox.write(tx, Fixture.envelope("b"));
      tx.commit();
      Outbox.write(tx, Fixture.envelope("rolled-back"));
      tx.rollback(); // the business change failed: its message must not exist
    }
    OutboxRelay relay = new OutboxRelay(fx::open, pub, 10_000, 100);
    assertEquals(2, relay.flush());
    assertEquals(0, relay.flush());
    try (Connection c = fx.open()) {
      assertEquals(0, OutboxRelay.pending(c));
    }
    KafkaConsumerLoop l = loop(insert("java"));
    Fixture.waitFor("two effects", () -> l.handled() == 2);
    waitSettled();
    assertEquals(Map.of("a", 1, "b", 1), fx.effects());
    // The relay keyed the records by biz_key, one partition per key.
    for (ConsumerRecord<byte[], byte[]> r : Fixture.readAll(fx.namespace + Fixture.TOPIC)) {
      assertEquals(Envelopes.decode(r.value()).getBizKey(), new String(r.key(), StandardCharsets.UTF_8));
    }
  }

  @Test
  void duplicateDeliveredTwiceOneEffect() throws Exception {
    KafkaPublisher pub = publisher();
    byte[] body = Envelopes.encode(Fixture.envelope("dup"));
    pub.publish(Fixture.TOPIC, "dup", body);
    pub.publish(Fixture.TOPIC, "dup", body);
    KafkaConsumerLoop l = loop(insert("java"));
    Fixture.waitFor("both deliveries settled", () -> l.handled() + l.deduplicated() == 2);
    waitSettled();
    assertEquals(1, l.handled());
    assertEquals(1, l.deduplicated());
    assertEquals(Map.of("dup", 1), fx.effects());
  }

  /**
   * A traced loop on the broker: the failed attempt and the retry read back
   * from the retry topic are both CONSUMER spans of the producer's trace,
   * with the messaging and msgcontract attributes of docs/DESIGN.md.
   */
  @Test
  void aTracedLoopKeepsTheProducersTraceAcrossTheRetryTopic() throws Exception {
    InMemorySpanExporter exp = InMemorySpanExporter.create();
    OpenTelemetrySdk otel = OpenTelemetrySdk.builder()
        .setTracerProvider(SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(exp)).build())
        .build();
    Span app = otel.getTracer("test").spanBuilder("order pay").startSpan();
    Envelope env;
    Scope current = app.makeCurrent();
    try {
      env = Tracing.inject(Fixture.envelope("traced"));
    } finally {
      current.close();
      app.end();
    }
    AtomicInteger runs = new AtomicInteger();
    Handler<OrderNote> ok = insert("java");
    Consumer<OrderNote> traced = new Consumer<OrderNote>(Fixture.SPEC, Fixture.HANDLER, (tx, m, e) -> {
      if (runs.incrementAndGet() == 1) {
        throw new RetryableException(50001, "system", "ledger unavailable");
      }
      ok.handle(tx, m, e);
    }).withTracer(new Tracing(otel, "kafka", Fixture.GROUP));
    KafkaConsumerLoop l = new KafkaConsumerLoop(fx.config(), Fixture.GROUP, fx::open);
    l.register(Fixture.SPEC, Fixture.HANDLER, traced);
    toClose.add(l);
    threads.add(Fixture.start(l, errors));
    publisher().publish(env);
    Fixture.waitFor("the retry handled", () -> l.handled() == 1);
    waitSettled();
    List<SpanData> process = exp.getFinishedSpanItems().stream()
        .filter(s -> s.getKind() == SpanKind.CONSUMER)
        .filter(s -> !"deferred".equals(s.getAttributes().get(Tracing.OUTCOME))) // read before it was due
        .toList();
    assertEquals(List.of("retry_scheduled", "handled"),
        process.stream().map(s -> s.getAttributes().get(Tracing.OUTCOME)).toList());
    for (SpanData s : process) {
      assertEquals(app.getSpanContext().getTraceId(), s.getTraceId(), "a delivery left the producer's trace");
      assertEquals("kafka", s.getAttributes().get(Tracing.SYSTEM));
      assertEquals(Fixture.TOPIC, s.getAttributes().get(Tracing.DESTINATION));
      assertEquals(Fixture.GROUP, s.getAttributes().get(Tracing.CONSUMER_GROUP));
      assertEquals("traced", s.getAttributes().get(Tracing.BIZ_KEY));
      assertEquals(env.getMessageId(), s.getAttributes().get(Tracing.MESSAGE_ID));
      // The record's place, read from the loop's delivery id.
      assertTrue(s.getAttributes().get(Tracing.PARTITION) != null && s.getAttributes().get(Tracing.KAFKA_OFFSET) != null,
          "no partition or offset on " + s.getAttributes());
    }
    assertEquals("50001", process.get(0).getAttributes().get(Tracing.ERROR_TYPE));
    assertEquals(null, process.get(1).getAttributes().get(Tracing.ERROR_TYPE));
    assertEquals(0L, process.get(0).getAttributes().get(Tracing.RETRY_COUNT));
    assertEquals(1L, process.get(1).getAttributes().get(Tracing.RETRY_COUNT));
    assertTrue(process.get(0).getAttributes().get(Tracing.RETRY_DELAY) > 0, "the retry's delay is on its span");
    assertEquals(Map.of("traced", 1), fx.effects());
  }

  @Test
  void retryableFailureThenSuccessWithTheContractsBackoff() throws Exception {
    KafkaPublisher pub = publisher();
    AtomicInteger runs = new AtomicInteger();
    Map<Integer, Long> ranAt = new ConcurrentHashMap<>();
    Handler<OrderNote> ok = insert("java");
    KafkaConsumerLoop l = loop((tx, m, env) -> {
      int n = runs.incrementAndGet();
      ranAt.put(n, System.currentTimeMillis());
      if (n == 1) {
        throw new RetryableException(50001, "system", "ledger unavailable");
      }
      ok.handle(tx, m, env);
    });
    pub.publish(Fixture.envelope("flaky"));
    Fixture.waitFor("the retry handled", () -> l.handled() == 1);
    waitSettled();
    assertEquals(1, l.retried());
    assertEquals(2, runs.get());
    assertEquals(Map.of("flaky", 1), fx.effects());
    List<ConsumerRecord<byte[], byte[]>> retries =
        Fixture.readAll(fx.namespace + Fixture.TOPIC + ".retry." + Fixture.GROUP);
    assertEquals(1, retries.size());
    ConsumerRecord<byte[], byte[]> r = retries.get(0);
    assertEquals("flaky", new String(r.key(), StandardCharsets.UTF_8));
    assertEquals(Fixture.TOPIC, new String(r.headers().lastHeader("msgcontract.topic").value(), StandardCharsets.UTF_8));
    Envelope env = Envelopes.decode(r.value());
    assertEquals(1, env.getRetryCount());
    assertEquals(50001, env.getLastError().getCode());
    assertTrue(env.getLastError().getRetryable());
    long delay = env.getNotBefore() - env.getLastError().getFailedAt();
    assertTrue(delay >= Fixture.POLICY.baseDelay(1) && delay < Fixture.POLICY.baseDelay(1) + Fixture.POLICY.jitterMs(),
        "backoff " + delay + " ms is not the contract's first delay");
    assertTrue(ranAt.get(2) >= env.getNotBefore(), "the retry ran before its not_before");
  }

  @Test
  void retriesExhaustedAfterTheContractsMaxRetries() throws Exception {
    KafkaPublisher pub = publisher();
    AtomicInteger runs = new AtomicInteger();
    KafkaConsumerLoop l = loop((tx, m, env) -> {
      runs.incrementAndGet();
      throw new RetryableException(50002, "system", "still down");
    });
    pub.publish(Fixture.envelope("down"));
    Fixture.waitFor("the dead letter", () -> l.deadLettered() == 1);
    waitSettled();
    assertEquals(Fixture.POLICY.maxRetries(), l.retried());
    assertEquals(Fixture.POLICY.maxRetries() + 1, runs.get());
    List<ConsumerRecord<byte[], byte[]>> dead = Fixture.readAll(fx.namespace + Fixture.TOPIC + ".dlq");
    assertEquals(1, dead.size());
    String meta = new String(dead.get(0).headers().lastHeader("msgcontract.dlq").value(), StandardCharsets.UTF_8);
    assertTrue(meta.contains("\"reason\":\"retries_exhausted\"") && meta.contains("\"code\":50002")
        && meta.contains("\"attempts\":" + (Fixture.POLICY.maxRetries() + 1)), meta);
    // The dead letter holds the last delivered bytes: the retry copy with retry_count = max_retries.
    assertEquals(Fixture.POLICY.maxRetries(), Envelopes.decode(dead.get(0).value()).getRetryCount());
    assertEquals(Map.of(), fx.effects());
  }

  @Test
  void poisonIsDeadLetteredAndListedByTheCli() throws Exception {
    KafkaPublisher pub = publisher();
    KafkaConsumerLoop l = loop((tx, m, env) -> {
      if (m.getValue().equals("poison")) {
        throw new NonRetryableException(40001, "business", "order unknown");
      }
      insert("java").handle(tx, m, env);
    });
    pub.publish(Fixture.envelope("poison"));
    pub.publish(Fixture.TOPIC, "garbage", "not an envelope".getBytes(StandardCharsets.UTF_8));
    pub.publish(Fixture.envelope("healthy"));
    Fixture.waitFor("two dead letters and one effect", () -> l.deadLettered() == 2 && l.handled() == 1);
    waitSettled();
    assertEquals(Map.of("healthy", 1), fx.effects());
    String out = cli("dlq", "list", "--kafka", Fixture.brokers(), "--namespace", fx.namespace, "--topic",
        Fixture.TOPIC);
    assertTrue(out.contains("2 records"), out);
    String poison = out.lines().filter(line -> line.contains(" poison ")).findFirst().orElse("");
    assertTrue(poison.contains("non_retryable") && poison.contains("40001") && poison.contains(Fixture.GROUP), out);
    assertTrue(out.lines().anyMatch(line -> line.contains(" decode ") && line.contains("-3")), out);
    String shown = cli("dlq", "show", "--kafka", Fixture.brokers(), "--namespace", fx.namespace,
        poison.split(" ")[0]);
    assertTrue(shown.contains(Fixture.HANDLER) && shown.contains("order unknown"), shown);
  }

  /** Runs the msgcontract CLI and returns its output; it must exit 0. */
  private static String cli(String... args) throws Exception {
    List<String> cmd = new ArrayList<>(List.of(Fixture.env("MSGCONTRACT_BIN")));
    cmd.addAll(List.of(args));
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertEquals(0, p.waitFor(), out);
    return out;
  }

  @Test
  void sigkillMidHandlerIsRedeliveredWithOneEffect() throws Exception {
    KafkaPublisher pub = publisher();
    Path hang = fx.dir.resolve("hang");
    Path ready = fx.dir.resolve("ready");
    Files.createFile(hang);
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    Process child = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"),
        LoopChild.class.getName(), fx.namespace, fx.dbFile.toString(), hang.toString(), ready.toString())
        .redirectOutput(ProcessBuilder.Redirect.DISCARD)
        .redirectError(fx.dir.resolve("child.log").toFile())
        .start();
    try {
      pub.publish(Fixture.envelope("killed"));
      Fixture.waitFor("the child inside the handler", () -> Files.exists(ready) || !child.isAlive());
      assertTrue(child.isAlive(), "the child died before the handler ran: " + Files.readString(
          fx.dir.resolve("child.log")));
      child.destroyForcibly(); // SIGKILL on Linux
      assertTrue(child.waitFor(60, TimeUnit.SECONDS));
      assertEquals(128 + 9, child.exitValue(), "the child was not ended by SIGKILL");
    } finally {
      child.destroyForcibly();
    }
    assertEquals(Map.of(), fx.effects(), "the killed handler's transaction committed");
    Files.delete(hang);
    KafkaConsumerLoop l = loop(insert("java"));
    Fixture.waitFor("the redelivery handled", () -> l.handled() == 1);
    waitSettled();
    assertEquals(Map.of("killed", 1), fx.effects());
  }

  /**
   * Creates the topic with 6 partitions; the loop gives the retry topic 3. In
   * any balanced split of the 9 between two members (4 and 5), each member
   * owns a partition of the topic.
   */
  private void sixPartitions() throws Exception {
    try (Admin a = Admin.create(Map.of("bootstrap.servers", Fixture.brokers()))) {
      String name = fx.namespace + Fixture.TOPIC;
      a.createTopics(List.of(new NewTopic(name, 6, (short) -1))).all().get();
      Fixture.waitFor("a leader for each partition of " + name, () -> {
        try {
          var d = a.describeTopics(List.of(name)).allTopicNames().get().get(name);
          return d.partitions().size() == 6 && d.partitions().stream().allMatch(p -> p.leader() != null);
        } catch (Exception e) {
          return false;
        }
      });
    }
  }

  @Test
  void revokedPartitionsCommitWhatIsDoneAndMoveOn() throws Exception {
    sixPartitions();
    // Every record is acknowledged before the first member starts, so each
    // partition holds work when the second member joins; the handler takes
    // 50 ms, so what is left after the first 50 (about 17 s of work) outlasts
    // a rebalance on a loaded machine (the first member learns of it at its
    // next heartbeat, within 3 s, and rejoins at its next poll). A
    // cooperative rebalance takes two rounds, each waiting for the first
    // member's next poll, which comes after the batch under way: batches of
    // 8 (0.4 s of handlers) rather than the default 64 (3.2 s) keep the two
    // rounds well inside that work; with 64 a CI run saw the first member
    // finish everything before the second was given a partition.
    int n = 400;
    List<org.apache.kafka.clients.producer.ProducerRecord<byte[], byte[]>> recs = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      Envelope env = Fixture.envelope("r" + i);
      recs.add(KafkaPublisher.record(fx.namespace + Fixture.TOPIC, env.getBizKey(), Envelopes.encode(env), List.of()));
    }
    sendAll(recs);
    Handler<OrderNote> slow = (tx, m, env) -> {
      Thread.sleep(50); // a second member joins while the first is busy
      insert("java").handle(tx, m, env);
    };
    KafkaConfig small = fx.config();
    small.batchSize = 8;
    KafkaConsumerLoop first = loop(small, fx::open, slow);
    Fixture.waitFor("the first member under way", () -> first.handled() >= 50);
    assertTrue(first.handled() < n, "the first member finished before the second joined; nothing was revoked");
    KafkaConsumerLoop second = loop(small, fx::open, slow);
    Fixture.waitFor("an effect per message", () -> first.handled() + second.handled() >= n);
    waitSettled();
    Map<String, Integer> effects = fx.effects();
    assertEquals(n, effects.size());
    effects.forEach((k, c) -> assertEquals(1, c, "biz_key " + k + " applied " + c + " times"));
    assertEquals(n, first.handled() + second.handled(), "a handler transaction committed twice");
    assertTrue(second.handled() > 0, "the second member was given no partition");
  }

  @Test
  void goAndJavaMembersOfOneGroupApplyEachMessageOnce() throws Exception {
    sixPartitions();
    // Each side fails some keys once, so each writes retry copies to
    // orders.retry.billing, whose partitions the two members share.
    Set<String> failedOnce = ConcurrentHashMap.newKeySet();
    KafkaConsumerLoop l = loop((tx, m, env) -> {
      if (m.getValue().endsWith("3") && failedOnce.add(m.getValue())) {
        throw new RetryableException(50001, "system", "fails once in Java");
      }
      insert("java").handle(tx, m, env);
    });
    Fixture.waitFor("the Java member joined", () -> fx.members() == 1);
    File log = fx.dir.resolve("go.log").toFile();
    Process go = new ProcessBuilder(Fixture.env("MSGCONTRACT_KAFKA_GO_PEER"), "-brokers", Fixture.brokers(),
        "-db", fx.dbFile.toString(), "-namespace", fx.namespace, "-group", Fixture.GROUP, "-topic", Fixture.TOPIC,
        "-event-type", Fixture.EVENT_TYPE, "-handler", Fixture.HANDLER, "-note", "go",
        "-fail-once-suffix", "7")
        .redirectErrorStream(true).redirectOutput(log).start();
    try {
      Fixture.waitFor("the Go member joined", () -> fx.members() == 2 || !go.isAlive());
      assertTrue(go.isAlive(), "the Go member exited: " + Files.readString(log.toPath()));
      // Joined is not yet assigned: records sent before the rebalance hands
      // the Go member its partitions could all go to the Java member, which
      // drains them in well under a second, and the Go member would then
      // fail (and retry) no key of its own.
      Fixture.waitFor("both members hold partitions of the topic",
          () -> fx.membersHolding(fx.namespace + Fixture.TOPIC) == 2 || !go.isAlive());
      assertTrue(go.isAlive(), "the Go member exited: " + Files.readString(log.toPath()));
      int n = 300;
      List<org.apache.kafka.clients.producer.ProducerRecord<byte[], byte[]>> recs = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        Envelope env = Fixture.envelope("k" + i);
        byte[] body = Envelopes.encode(env);
        String name = fx.namespace + Fixture.TOPIC;
        recs.add(KafkaPublisher.record(name, env.getBizKey(), body, List.of()));
        if (i % 5 == 0) { // a duplicate, as a producer retry would make it
          recs.add(KafkaPublisher.record(name, env.getBizKey(), body, List.of()));
        }
      }
      sendAll(recs);
      Fixture.waitFor("an effect per message", () -> {
        try {
          return fx.effects().size() == n;
        } catch (Exception e) {
          return false;
        }
      });
      waitSettled();
      Map<String, Integer> effects = fx.effects();
      assertEquals(n, effects.size());
      effects.forEach((k, c) -> assertEquals(1, c, "biz_key " + k + " applied " + c + " times"));
      assertEquals(Set.of("go", "java"), fx.notes(), "both members should have handled messages");
      assertTrue(l.retried() > 0, "the Java member published no retry");
      List<ConsumerRecord<byte[], byte[]>> retries =
          Fixture.readAll(fx.namespace + Fixture.TOPIC + ".retry." + Fixture.GROUP);
      assertTrue(retries.stream().anyMatch(r -> new String(r.key(), StandardCharsets.UTF_8).endsWith("7")),
          "the Go member published no retry");
    } finally {
      go.destroy(); // SIGTERM: the Go consumer closes and leaves the group
      go.waitFor(60, TimeUnit.SECONDS);
    }
  }
}
