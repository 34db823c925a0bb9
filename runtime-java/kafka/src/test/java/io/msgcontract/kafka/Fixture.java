package io.msgcontract.kafka;

import static org.junit.jupiter.api.Assertions.fail;

import io.msgcontract.support.DedupStore;
import io.msgcontract.support.Envelopes;
import io.msgcontract.support.ErrorRange;
import io.msgcontract.support.ErrorRules;
import io.msgcontract.support.EventSpec;
import io.msgcontract.support.RetryPolicy;
import io.msgcontract.kafka.testpb.OrderNote;
import io.msgcontract.v1.Envelope;
import java.io.IOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.UUID;
import java.util.function.BooleanSupplier;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.MemberDescription;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * What the tests share: the broker from scripts/with-kafka.sh, a fresh
 * namespace per test, a SQLite business database with the dedup, effects and
 * outbox tables, and readers of the group's backlog and of whole topics.
 */
final class Fixture implements AutoCloseable {
  static final String TOPIC = "orders";
  static final String GROUP = "billing";
  static final String EVENT_TYPE = "ORDER_PAID";
  static final String HANDLER = "record-effect";
  static final RetryPolicy POLICY = new RetryPolicy(200, 2.0, 100, 2000, 3);
  static final ErrorRules RULES = new ErrorRules(List.of(new ErrorRange(40000, 49999, false, "business"),
      new ErrorRange(50000, 59999, true, "system")), true);
  /** OrderNote is generated from integration/javakafka/testdata/orders.proto, the schema of subject orders-value. */
  static final EventSpec<OrderNote> SPEC = new EventSpec<>("msgcontract.javakafka.v1.OrderNote", TOPIC, EVENT_TYPE,
      "{value}", POLICY, RULES, "", OrderNote.getDefaultInstance(), OrderNote::getValue);
  /** A bound against hangs only; nothing asserts how fast anything is. */
  static final Duration WAIT = Duration.ofSeconds(120);

  final String namespace = "jk" + UUID.randomUUID().toString().substring(0, 8) + ".";
  final Path dir;
  final Path dbFile;

  Fixture() throws IOException, SQLException {
    dir = Files.createTempDirectory("msgcontract-java-kafka");
    dbFile = dir.resolve("business.db");
    try (Connection c = open(); Statement st = c.createStatement()) {
      c.setAutoCommit(true);
      DedupStore.migrate(c);
      st.execute("CREATE TABLE IF NOT EXISTS effects (biz_key TEXT NOT NULL, note TEXT NOT NULL)");
      Outbox.migrate(c, Outbox.Dialect.SQLITE);
    }
  }

  static String brokers() {
    String b = System.getenv("MSGCONTRACT_KAFKA_BROKERS");
    if (b == null || b.isEmpty()) {
      fail("MSGCONTRACT_KAFKA_BROKERS is not set: run the tests under scripts/with-kafka.sh (make test-java-kafka)");
    }
    return b;
  }

  static String env(String name) {
    String v = System.getenv(name);
    if (v == null || v.isEmpty()) {
      fail(name + " is not set: run the tests through make test-java-kafka, which builds it");
    }
    return v;
  }

  /** The tests' loop configuration in namespace, as a child process takes it too. */
  static KafkaConfig config(String namespace) {
    KafkaConfig c = new KafkaConfig();
    c.brokers = brokers();
    c.namespace = namespace;
    c.partitions = 3;
    c.sessionTimeoutMs = 6000;
    return c;
  }

  KafkaConfig config() {
    KafkaConfig c = config(namespace);
    // A bound against hangs on a loaded test machine, not a figure anything asserts.
    c.publishTimeoutMs = WAIT.toMillis();
    return c;
  }

  /** A connection as a service would configure it for SQLite: WAL, immediate transactions, a busy wait. */
  static Connection open(Path dbFile) throws SQLException {
    Properties p = new Properties();
    p.setProperty("busy_timeout", "30000");
    p.setProperty("transaction_mode", "IMMEDIATE");
    p.setProperty("journal_mode", "WAL");
    return DriverManager.getConnection("jdbc:sqlite:" + dbFile, p);
  }

  Connection open() throws SQLException {
    return open(dbFile);
  }

  /** Called before each call of a method of an intercepted connection. */
  interface Interceptor {
    /**
     * Runs before method is called; returns true when it has answered a void
     * call itself, false to let the connection run it.
     */
    boolean before(String method) throws Exception;
  }

  /** Returns c behind a proxy that asks i before every call. */
  static Connection intercept(Connection c, Interceptor i) {
    return (Connection) Proxy.newProxyInstance(Connection.class.getClassLoader(), new Class<?>[] {Connection.class},
        (proxy, m, args) -> {
          if (i.before(m.getName())) {
            return null;
          }
          try {
            return m.invoke(c, args);
          } catch (InvocationTargetException x) {
            throw x.getCause();
          }
        });
  }

  static Envelope envelope(String key) {
    try {
      return Envelopes.newEnvelope(SPEC, note(key), System.currentTimeMillis());
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  static OrderNote note(String value) {
    return OrderNote.newBuilder().setValue(value).build();
  }

  /** Effects per biz_key. */
  Map<String, Integer> effects() throws SQLException {
    Map<String, Integer> m = new HashMap<>();
    try (Connection c = open(); Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SELECT biz_key, count(*) FROM effects GROUP BY biz_key")) {
      while (rs.next()) {
        m.put(rs.getString(1), rs.getInt(2));
      }
    }
    return m;
  }

  Set<String> notes() throws SQLException {
    Set<String> s = new HashSet<>();
    try (Connection c = open(); Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SELECT DISTINCT note FROM effects")) {
      while (rs.next()) {
        s.add(rs.getString(1));
      }
    }
    return s;
  }

  static void waitFor(String what, BooleanSupplier cond) throws InterruptedException {
    long end = System.nanoTime() + WAIT.toNanos();
    while (!cond.getAsBoolean()) {
      if (System.nanoTime() > end) {
        fail("gave up waiting (" + WAIT + ") for: " + what);
      }
      Thread.sleep(100);
    }
  }

  /** Runs the loop in a thread; the returned list receives what run() threw. */
  static Thread start(KafkaConsumerLoop loop, List<Throwable> errors) {
    Thread t = new Thread(() -> {
      try {
        loop.run();
      } catch (Throwable e) { // reported by the test
        errors.add(e);
      }
    }, "kafka-loop");
    t.start();
    return t;
  }

  /** The group's records on the topic and its retry topic that are not committed yet. */
  long backlog() {
    try (Admin a = Admin.create(Map.of("bootstrap.servers", brokers()))) {
      Map<TopicPartition, OffsetSpec> want = new HashMap<>();
      for (String t : List.of(namespace + TOPIC, namespace + TOPIC + ".retry." + GROUP)) {
        for (var p : a.describeTopics(List.of(t)).allTopicNames().get().get(t).partitions()) {
          want.put(new TopicPartition(t, p.partition()), OffsetSpec.latest());
        }
      }
      var ends = a.listOffsets(want).all().get();
      Map<TopicPartition, OffsetAndMetadata> committed =
          a.listConsumerGroupOffsets(namespace + GROUP).partitionsToOffsetAndMetadata().get();
      long n = 0;
      for (var e : ends.entrySet()) {
        OffsetAndMetadata c = committed.get(e.getKey());
        n += Math.max(e.getValue().offset() - (c == null ? 0 : c.offset()), 0);
      }
      return n;
    } catch (Exception e) {
      return -1;
    }
  }

  /** How many members the group has, or -1 when it cannot be described. */
  int members() {
    Collection<MemberDescription> m = groupMembers();
    return m == null ? -1 : m.size();
  }

  /**
   * How many members of the group hold a partition of topic (a full Kafka
   * name), or -1 when the group cannot be described. A member that joined
   * holds none until the rebalance it started has handed it its share.
   */
  int membersHolding(String topic) {
    Collection<MemberDescription> m = groupMembers();
    return m == null ? -1 : (int) m.stream()
        .filter(d -> d.assignment().topicPartitions().stream().anyMatch(tp -> tp.topic().equals(topic)))
        .count();
  }

  /** The group's members as the broker describes them, or null when it cannot. */
  private Collection<MemberDescription> groupMembers() {
    try (Admin a = Admin.create(Map.of("bootstrap.servers", brokers()))) {
      return a.describeConsumerGroups(List.of(namespace + GROUP)).all().get().get(namespace + GROUP).members();
    } catch (Exception e) {
      return null;
    }
  }

  /** Every record of topic (a full Kafka name) up to its current end. */
  static List<ConsumerRecord<byte[], byte[]>> readAll(String topic) throws InterruptedException {
    Properties p = new Properties();
    p.put("bootstrap.servers", brokers());
    List<ConsumerRecord<byte[], byte[]>> out = new ArrayList<>();
    try (KafkaConsumer<byte[], byte[]> c =
        new KafkaConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
      List<TopicPartition> tps = new ArrayList<>();
      c.partitionsFor(topic).forEach(pi -> tps.add(new TopicPartition(topic, pi.partition())));
      c.assign(tps);
      c.seekToBeginning(tps);
      Map<TopicPartition, Long> ends = c.endOffsets(tps);
      long end = System.nanoTime() + WAIT.toNanos();
      while (tps.stream().anyMatch(tp -> c.position(tp) < ends.get(tp))) {
        if (System.nanoTime() > end) {
          fail("could not read " + topic + " to its end");
        }
        c.poll(Duration.ofMillis(200)).forEach(out::add);
      }
    }
    return out;
  }

  @Override
  public void close() throws IOException {
    try (var files = Files.walk(dir)) {
      files.sorted((a, b) -> b.compareTo(a)).forEach(f -> f.toFile().delete());
    }
  }
}
