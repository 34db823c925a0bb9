package io.msgcontract.rocketmq;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import io.msgcontract.kafka.testpb.OrderNote;
import io.msgcontract.support.BizKeyFunction;
import io.msgcontract.support.DedupStore;
import io.msgcontract.support.Envelopes;
import io.msgcontract.support.ErrorRange;
import io.msgcontract.support.ErrorRules;
import io.msgcontract.support.EventSpec;
import io.msgcontract.support.Handler;
import io.msgcontract.support.RetryPolicy;
import io.msgcontract.v1.Envelope;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.function.BooleanSupplier;

/**
 * What the tests share: the broker of scripts/with-rocketmq.sh, a fresh
 * namespace per test (as runtime-go's rocketmqtest), its topics created by the
 * Go peer (the 5.x client cannot create topics), a SQLite business database
 * with the dedup and effects tables.
 */
final class Fixture implements AutoCloseable {
  static final String TOPIC = "orders";
  static final String GROUP = "billing";
  static final String EVENT_TYPE = "ORDER_PAID";
  static final String HANDLER = "record-effect";
  static final RetryPolicy POLICY = new RetryPolicy(200, 2.0, 100, 2000, 3);
  static final ErrorRules RULES = new ErrorRules(List.of(new ErrorRange(40000, 49999, false, "business"),
      new ErrorRange(50000, 59999, true, "system")), true);
  /** OrderNote is generated from integration/javakafka/testdata/orders.proto (a StringValue's bytes). */
  static final EventSpec<OrderNote> SPEC = spec(POLICY);
  /** A bound against hangs only; nothing asserts how fast anything is. */
  static final Duration WAIT = Duration.ofSeconds(120);

  final String namespace = namespace();
  final Path dir;
  final Path dbFile;

  Fixture() throws IOException, SQLException {
    dir = Files.createTempDirectory("msgcontract-java-rocketmq");
    dbFile = dir.resolve("business.db");
    try (Connection c = open(); Statement st = c.createStatement()) {
      c.setAutoCommit(true);
      DedupStore.migrate(c);
      st.execute("CREATE TABLE IF NOT EXISTS effects (biz_key TEXT NOT NULL, note TEXT NOT NULL)");
    }
  }

  static EventSpec<OrderNote> spec(RetryPolicy policy) {
    return spec(TOPIC, policy);
  }

  /** The suite's event on another msgcontract topic. */
  static EventSpec<OrderNote> spec(String topic, RetryPolicy policy) {
    return spec(topic, policy, OrderNote::getValue);
  }

  /** The suite's event on topic with biz_key key (its template still reads "{value}"). */
  static EventSpec<OrderNote> spec(String topic, RetryPolicy policy, BizKeyFunction<OrderNote> key) {
    return new EventSpec<>("msgcontract.javakafka.v1.OrderNote", topic, EVENT_TYPE, "{value}", policy, RULES, "",
        OrderNote.getDefaultInstance(), key);
  }

  /** A fresh namespace: "j", 10 random hex digits and "_". */
  static String namespace() {
    byte[] b = new byte[5];
    new java.security.SecureRandom().nextBytes(b);
    return "j" + HexFormat.of().formatHex(b) + "_";
  }

  static String env(String name) {
    String v = System.getenv(name);
    if (v == null || v.isEmpty()) {
      fail(name + " is not set: run the tests through make test-java-rocketmq (scripts/with-rocketmq.sh, and the"
          + " Go peer it builds)");
    }
    return v;
  }

  RocketConfig config() {
    RocketConfig c = new RocketConfig();
    c.endpoints = env("MSGCONTRACT_ROCKETMQ_PROXY");
    c.namespace = namespace;
    c.leaseMs = 10_000;
    c.awaitMs = 1_000;
    return c;
  }

  /** The Go peer's command line: mode, the broker, this namespace and the topic, then more. */
  List<String> peer(String mode, String... more) {
    List<String> cmd = new ArrayList<>(List.of(env("MSGCONTRACT_ROCKETMQ_GO_PEER"), mode, "-namesrv",
        env("MSGCONTRACT_ROCKETMQ_NAMESRV"), "-broker", env("MSGCONTRACT_ROCKETMQ_BROKER"), "-namespace", namespace,
        "-topic", TOPIC, "-event-type", EVENT_TYPE));
    cmd.addAll(List.of(more));
    return cmd;
  }

  /** Creates the topic, the retry topics of groups and the dead-letter topics in this namespace (the Go peer). */
  void topics(String... groups) throws Exception {
    run(peer("topics", repeat("-group", groups)));
  }

  /**
   * Creates FIFO topic fifoTopic and the FIFO groups groups (orderly, their
   * retry topics, and the non-orderly groups those are read as) in this
   * namespace, besides what {@link #topics} creates (the Go peer).
   */
  void fifoTopics(String fifoTopic, String... groups) throws Exception {
    List<String> more = new ArrayList<>(List.of("-fifo-topic", fifoTopic));
    more.addAll(List.of(repeat("-fifo-group", groups)));
    run(peer("topics", more.toArray(new String[0])));
  }

  /** flag before each of values: the Go peer's repeatable flags. */
  private static String[] repeat(String flag, String... values) {
    List<String> l = new ArrayList<>();
    for (String v : values) {
      l.add(flag);
      l.add(v);
    }
    return l.toArray(new String[0]);
  }

  /** Runs cmd and returns its output; a non-zero exit fails the test. */
  static String run(List<String> cmd) throws Exception {
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertEquals(0, p.waitFor(), String.join(" ", cmd) + ":\n" + out);
    return out;
  }

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

  static Envelope envelope(String key) {
    return envelope(SPEC, key);
  }

  static Envelope envelope(EventSpec<OrderNote> spec, String key) {
    try {
      return Envelopes.newEnvelope(spec, OrderNote.newBuilder().setValue(key).build(), System.currentTimeMillis());
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  /** The handler most tests use: one row per run, the effect the dedup must keep single. */
  static Handler<OrderNote> insert(String note) {
    return (tx, m, env) -> {
      try (PreparedStatement st = tx.prepareStatement("INSERT INTO effects (biz_key, note) VALUES (?, ?)")) {
        st.setString(1, m.getValue());
        st.setString(2, note);
        st.executeUpdate();
      }
    };
  }

  /** Effects per biz_key. */
  Map<String, Integer> effects() {
    Map<String, Integer> m = new HashMap<>();
    try (Connection c = open(); Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SELECT biz_key, count(*) FROM effects GROUP BY biz_key")) {
      while (rs.next()) {
        m.put(rs.getString(1), rs.getInt(2));
      }
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
    return m;
  }

  /** The message id of each biz_key's claim of handler (the msg_dedup row). */
  Map<String, String> claims(String handler) throws SQLException {
    Map<String, String> m = new HashMap<>();
    try (Connection c = open();
        PreparedStatement st = c.prepareStatement("SELECT biz_key, message_id FROM " + DedupStore.TABLE
            + " WHERE handler = ?")) {
      st.setString(1, handler);
      try (ResultSet rs = st.executeQuery()) {
        while (rs.next()) {
          m.put(rs.getString(1), rs.getString(2));
        }
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
      Thread.sleep(50);
    }
  }

  /** Runs the loop in a thread; the returned list receives what run() threw. */
  static Thread start(RocketConsumerLoop loop, List<Throwable> errors) {
    Thread t = new Thread(() -> {
      try {
        loop.run();
      } catch (Throwable e) { // reported by the test
        errors.add(e);
      }
    }, "rocketmq-loop");
    t.start();
    return t;
  }

  static void assertOneEach(Map<String, Integer> effects, int n) {
    assertEquals(n, effects.size(), "effects: " + effects);
    effects.forEach((k, c) -> assertEquals(1, c, "biz_key " + k + " applied " + c + " times"));
  }

  @Override
  public void close() throws IOException {
    try (var files = Files.walk(dir)) {
      files.sorted((a, b) -> b.compareTo(a)).forEach(f -> f.toFile().delete());
    }
  }
}
