package io.msgcontract.rabbitmq;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.GetResponse;
import io.msgcontract.kafka.testpb.OrderNote;
import io.msgcontract.support.DedupStore;
import io.msgcontract.support.Ddl;
import io.msgcontract.support.Envelopes;
import io.msgcontract.support.ErrorRange;
import io.msgcontract.support.ErrorRules;
import io.msgcontract.support.EventSpec;
import io.msgcontract.support.Handler;
import io.msgcontract.support.RetryPolicy;
import io.msgcontract.v1.Envelope;
import java.io.IOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
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
 * What the tests share: the broker of scripts/with-rabbitmq.sh, a fresh
 * prefix per test (as runtime-go's rabbitmqtest.Prefix), a SQLite business
 * database with the dedup, effects and outbox tables.
 */
final class Fixture implements AutoCloseable {
  static final String ENV = "MSGCONTRACT_TEST_RABBITMQ";
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

  final String prefix = prefix();
  final Path dir;
  final Path dbFile;

  Fixture() throws IOException, SQLException {
    dir = Files.createTempDirectory("msgcontract-java-rabbitmq");
    dbFile = dir.resolve("business.db");
    try (Connection c = open(); Statement st = c.createStatement()) {
      c.setAutoCommit(true);
      DedupStore.migrate(c);
      st.execute("CREATE TABLE IF NOT EXISTS effects (biz_key TEXT NOT NULL, note TEXT NOT NULL)");
      RabbitOutboxRelay.migrate(c, Ddl.SQLITE);
    }
  }

  static EventSpec<OrderNote> spec(RetryPolicy policy) {
    return new EventSpec<>("msgcontract.javakafka.v1.OrderNote", TOPIC, EVENT_TYPE, "{value}", policy, RULES, "",
        OrderNote.getDefaultInstance(), OrderNote::getValue);
  }

  /** A fresh prefix: "j" and 12 random hex digits. */
  static String prefix() {
    byte[] b = new byte[6];
    new java.security.SecureRandom().nextBytes(b);
    return "j" + HexFormat.of().formatHex(b);
  }

  static String url() {
    String u = System.getenv(ENV);
    if (u == null || u.isEmpty()) {
      fail(ENV + " is not set: run the tests under scripts/with-rabbitmq.sh (make test-java-rabbitmq)");
    }
    return u;
  }

  static String env(String name) {
    String v = System.getenv(name);
    if (v == null || v.isEmpty()) {
      fail(name + " is not set: run the tests through make test-java-rabbitmq, which builds it");
    }
    return v;
  }

  RabbitConfig config() {
    RabbitConfig c = new RabbitConfig();
    c.url = url();
    c.prefix = prefix;
    c.publishTimeoutMs = WAIT.toMillis();
    return c;
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

  /** Called before each call of a method of an intercepted connection. */
  interface Interceptor {
    void before(String method) throws Exception;
  }

  /** Returns c behind a proxy that tells i of every call first. */
  static Connection intercept(Connection c, Interceptor i) {
    return (Connection) Proxy.newProxyInstance(Connection.class.getClassLoader(), new Class<?>[] {Connection.class},
        (proxy, m, args) -> {
          i.before(m.getName());
          try {
            return m.invoke(c, args);
          } catch (InvocationTargetException x) {
            throw x.getCause();
          }
        });
  }

  static Envelope envelope(String key) {
    try {
      return Envelopes.newEnvelope(SPEC, OrderNote.newBuilder().setValue(key).build(), System.currentTimeMillis());
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
  static Thread start(RabbitConsumerLoop loop, List<Throwable> errors) {
    Thread t = new Thread(() -> {
      try {
        loop.run();
      } catch (Throwable e) { // reported by the test
        errors.add(e);
      }
    }, "rabbitmq-loop");
    t.start();
    return t;
  }

  /** A raw client connection to the broker (a "plain client": no runtime code). */
  static com.rabbitmq.client.Connection plain() throws Exception {
    com.rabbitmq.client.ConnectionFactory f = new com.rabbitmq.client.ConnectionFactory();
    f.setUri(url());
    f.setVirtualHost("/"); // amqp://host:port/ is the default vhost, as in RabbitPublisher
    return f.newConnection("msgcontract java tests");
  }

  /** One message taken (and acknowledged) from a queue. */
  record Got(String messageId, String contentType, Map<String, Object> headers, byte[] body) {
    String text() {
      return new String(body, StandardCharsets.UTF_8);
    }
  }

  /** Takes every message of queue (basic.get, acknowledged). */
  static List<Got> drain(String queue) throws Exception {
    List<Got> out = new ArrayList<>();
    try (com.rabbitmq.client.Connection c = plain(); Channel ch = c.createChannel()) {
      for (GetResponse g = ch.basicGet(queue, true); g != null; g = ch.basicGet(queue, true)) {
        out.add(new Got(g.getProps().getMessageId(), g.getProps().getContentType(), g.getProps().getHeaders(),
            g.getBody()));
      }
    }
    return out;
  }

  /** How many messages are ready in queue. */
  static long ready(String queue) throws Exception {
    try (com.rabbitmq.client.Connection c = plain(); Channel ch = c.createChannel()) {
      return ch.queueDeclarePassive(queue).getMessageCount();
    }
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
