package io.msgcontract.spring.kafka;

import static org.junit.jupiter.api.Assertions.fail;

import io.msgcontract.kafka.KafkaConfig;
import java.net.URI;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.function.BooleanSupplier;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.MemberDescription;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.utils.Utils;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * What the tests share: the broker of scripts/with-kafka.sh, a fresh database per test on the
 * PostgreSQL of scripts/with-postgres.sh or the MariaDB of scripts/with-mariadb.sh, a fresh
 * namespace per test, and an application started on them. A missing variable fails the test.
 */
final class Infra {
  static final String GROUP = "billing";
  static final String HANDLER = "record-payment";
  static final int PARTITIONS = 3;
  /** A bound against hangs only. */
  static final Duration WAIT = Duration.ofSeconds(90);

  private Infra() {}

  static String env(String name, String how) {
    String v = System.getenv(name);
    if (v == null || v.isEmpty()) {
      fail(name + " is not set: run the tests under " + how + " (make test-spring)");
    }
    return v;
  }

  static String brokers() {
    return env("MSGCONTRACT_KAFKA_BROKERS", "scripts/with-kafka.sh");
  }

  static String namespace() {
    return "sk" + UUID.randomUUID().toString().substring(0, 8) + ".";
  }

  /** The loop configuration of a plain Java member in namespace. */
  static KafkaConfig config(String namespace) {
    KafkaConfig c = new KafkaConfig();
    c.brokers = brokers();
    c.namespace = namespace;
    c.partitions = PARTITIONS;
    c.sessionTimeoutMs = 6000;
    c.publishTimeoutMs = WAIT.toMillis();
    return c;
  }

  /** A database of its own on the server of kind, dropped on close, with the business tables. */
  static final class TestDb implements AutoCloseable {
    final Db kind;
    final String name = "sk_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
    final String adminUrl;
    final String url;
    final String user;
    final String password;

    TestDb(Db kind) throws SQLException {
      this.kind = kind;
      if (kind == Db.POSTGRES) {
        URI u = URI.create(env("MSGCONTRACT_PG_DSN", "scripts/with-postgres.sh"));
        user = u.getUserInfo().split(":", 2)[0];
        String[] ui = u.getUserInfo().split(":", 2);
        password = ui.length > 1 ? ui[1] : "";
        String base = "jdbc:postgresql://" + u.getHost() + ":" + u.getPort() + "/";
        adminUrl = base + "postgres";
        url = base + name;
      } else {
        URI u = URI.create(env("MSGCONTRACT_MYSQL_DSN", "scripts/with-mariadb.sh"));
        String[] ui = u.getUserInfo().split(":", 2);
        user = ui[0];
        password = ui.length > 1 ? ui[1] : "";
        String base = "jdbc:mariadb://" + u.getHost() + ":" + u.getPort() + "/";
        adminUrl = base;
        url = base + name;
      }
      try (Connection c = DriverManager.getConnection(adminUrl, user, password); Statement st = c.createStatement()) {
        st.execute("CREATE DATABASE " + name + (kind == Db.MARIADB ? " CHARACTER SET utf8mb4" : ""));
      }
      try (Connection c = open(); Statement st = c.createStatement()) {
        st.execute("CREATE TABLE payments (order_id VARCHAR(64) PRIMARY KEY, amount BIGINT NOT NULL, member VARCHAR(16) NOT NULL)");
        st.execute("CREATE TABLE audit (order_id VARCHAR(64) PRIMARY KEY)");
        st.execute("CREATE TABLE orders (id VARCHAR(64) PRIMARY KEY)");
      }
    }

    Connection open() throws SQLException {
      Connection c = DriverManager.getConnection(url, user, password);
      c.setAutoCommit(true);
      return c;
    }

    long count(String sql, Object... args) {
      try (Connection c = open(); PreparedStatement st = c.prepareStatement(sql)) {
        for (int i = 0; i < args.length; i++) {
          st.setObject(i + 1, args[i]);
        }
        try (ResultSet rs = st.executeQuery()) {
          rs.next();
          return rs.getLong(1);
        }
      } catch (SQLException e) {
        throw new IllegalStateException(e);
      }
    }

    void exec(String sql, Object... args) throws SQLException {
      try (Connection c = open(); PreparedStatement st = c.prepareStatement(sql)) {
        for (int i = 0; i < args.length; i++) {
          st.setObject(i + 1, args[i]);
        }
        st.executeUpdate();
      }
    }

    /** The application's settings for this database. */
    List<String> springProperties() {
      return List.of("spring.datasource.url=" + url, "spring.datasource.username=" + user,
          "spring.datasource.password=" + password);
    }

    @Override
    public void close() throws SQLException {
      try (Connection c = DriverManager.getConnection(adminUrl, user, password); Statement st = c.createStatement()) {
        st.execute("DROP DATABASE " + name + (kind == Db.POSTGRES ? " WITH (FORCE)" : ""));
      }
    }
  }

  /** Starts the test application on db in namespace ns, with more settings after the defaults. */
  static ConfigurableApplicationContext start(TestDb db, String ns, String... more) {
    return start(new Class<?>[] {TestApp.class}, db, ns, more);
  }

  /** Starts an application of sources on db in namespace ns. */
  static ConfigurableApplicationContext start(Class<?>[] sources, TestDb db, String ns, String... more) {
    List<String> p = new ArrayList<>(db.springProperties());
    p.addAll(List.of("spring.kafka.bootstrap-servers=" + brokers(), "msgcontract.group=" + GROUP,
        "msgcontract.namespace=" + ns, "msgcontract.migrate=true", "msgcontract.partitions=" + PARTITIONS,
        "msgcontract.session-timeout-ms=6000", "spring.main.banner-mode=off",
        "msgcontract.publish-timeout-ms=" + WAIT.toMillis()));
    p.addAll(Arrays.asList(more));
    return new SpringApplicationBuilder(sources).web(WebApplicationType.NONE)
        .properties(p.toArray(String[]::new)).run();
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

  /** The partition the publisher sends biz_key to (Kafka's default partitioner). */
  static int partition(String bizKey) {
    return Utils.toPositive(Utils.murmur2(bizKey.getBytes(java.nio.charset.StandardCharsets.UTF_8))) % PARTITIONS;
  }

  /** The group's members as the broker describes them, or an empty list. */
  static List<MemberDescription> members(String ns) {
    try (Admin a = Admin.create(Map.of("bootstrap.servers", brokers()))) {
      return new ArrayList<>(a.describeConsumerGroups(List.of(ns + GROUP)).all().get().get(ns + GROUP).members());
    } catch (Exception e) {
      return List.of();
    }
  }

  /**
   * The records of the group's topics (T and T.retry.group) that the group has not committed, or
   * -1 when the broker cannot say.
   */
  static long backlog(String ns, String topic) {
    try (Admin a = Admin.create(Map.of("bootstrap.servers", brokers()))) {
      Map<TopicPartition, org.apache.kafka.clients.admin.OffsetSpec> want = new java.util.HashMap<>();
      for (String t : List.of(ns + topic, ns + topic + ".retry." + GROUP)) {
        for (var p : a.describeTopics(List.of(t)).allTopicNames().get().get(t).partitions()) {
          want.put(new TopicPartition(t, p.partition()), org.apache.kafka.clients.admin.OffsetSpec.latest());
        }
      }
      var ends = a.listOffsets(want).all().get();
      var committed = a.listConsumerGroupOffsets(ns + GROUP).partitionsToOffsetAndMetadata().get();
      long n = 0;
      for (var e : ends.entrySet()) {
        var c = committed.get(e.getKey());
        n += Math.max(e.getValue().offset() - (c == null ? 0 : c.offset()), 0);
      }
      return n;
    } catch (Exception e) {
      return -1;
    }
  }

  /** Every record of topic (a full Kafka name) up to its current end. */
  static List<ConsumerRecord<byte[], byte[]>> readAll(String topic) throws InterruptedException {
    Properties p = new Properties();
    p.put("bootstrap.servers", brokers());
    List<ConsumerRecord<byte[], byte[]>> out = new ArrayList<>();
    try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
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
}
