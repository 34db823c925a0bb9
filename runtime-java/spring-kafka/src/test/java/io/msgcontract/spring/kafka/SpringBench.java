package io.msgcontract.spring.kafka;

import com.example.shop.payment.v1.PaySuccess;
import com.example.shop.payment.v1.PaymentContract;
import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.msgcontract.kafka.KafkaConfig;
import io.msgcontract.kafka.KafkaConsumerLoop;
import io.msgcontract.kafka.KafkaPublisher;
import io.msgcontract.support.DedupStore;
import io.msgcontract.support.Envelopes;
import io.msgcontract.v1.Envelope;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Properties;
import java.util.UUID;
import java.util.function.LongSupplier;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;

/**
 * {@code make bench-java-kafka} (bench/java-kafka/run.sh), its Spring half: the starter's
 * {@code @ContractListener} on Spring Kafka's container against the plain {@link
 * KafkaConsumerLoop}, on the same records of a real broker, side by side in one run.
 *
 * <p>It publishes -n PaySuccess records (20,000 by default) of distinct biz_keys to a 6-partition
 * topic once. Each run is a new group (from the first offset) writing into a fresh SQLite file
 * (WAL, immediate transactions, a 5 s busy timeout) through a HikariCP pool of 4 on the same URL
 * for both sides, with the same handler body on the delivery's connection (one INSERT), the
 * default batch size (64) and commit interval: the plain loop gets its connections from the pool
 * ({@code dataSource::getConnection}); the Spring listener runs in the starter's Spring-managed
 * transactions (DataSourceTransactionManager on the pool). Both run once untimed (warm-up), then
 * in each of -rounds rounds (3), in alternating order. A run is timed from its first handled
 * delivery to its last (the group's join and the application's start are left out), with the
 * process's CPU over the same span; every run checks that each record left exactly one row. It
 * prints each run, then
 *
 * <pre>
 * ratio spring/java-loop=X (time per message, median of the rounds' own ratios; LO-HI)
 * cpu per message: spring Y us, java-loop Z us (medians)
 * </pre>
 *
 * Above 1 the Spring listener is slower. Nothing is asserted: the figures are measured and printed.
 */
final class SpringBench {
  private static final String GROUP_PREFIX = "bench-";

  private SpringBench() {}

  private record Run(String mode, double seconds, double cpuSeconds, int n) {
    double rate() {
      return n / seconds;
    }

    double cpuMicros() {
      return cpuSeconds * 1e6 / n;
    }
  }

  /** The Spring application of a run: the listener writes as the plain loop's handler does. */
  @SpringBootConfiguration
  @EnableAutoConfiguration
  @Import(Listener.class)
  static class App {}

  /** The listener of a Spring run. */
  static class Listener {
    @ContractListener(spec = PaymentContract.PaySuccess.class, handler = "record-payment")
    void on(Connection tx, PaySuccess m, Envelope env) throws Exception {
      insert(tx, m);
    }
  }

  /** The handler body of both sides. */
  static void insert(Connection tx, PaySuccess m) throws Exception {
    try (PreparedStatement ps = tx.prepareStatement("INSERT INTO effects (biz_key, note) VALUES (?, ?)")) {
      ps.setString(1, m.getOrderId());
      ps.setString(2, "bench");
      ps.executeUpdate();
    }
  }

  public static void main(String[] args) throws Exception {
    int n = 20000; // a batched run of 10,000 takes well under a second here: too short to time
    int rounds = 3;
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "-n" -> n = Integer.parseInt(args[++i]);
        case "-rounds" -> rounds = Integer.parseInt(args[++i]);
        default -> {
          System.err.println("usage: SpringBench [-n RECORDS] [-rounds R]   (unknown argument " + args[i] + ")");
          System.exit(2);
        }
      }
    }
    String brokers = System.getenv("MSGCONTRACT_KAFKA_BROKERS");
    if (brokers == null || brokers.isEmpty()) {
      System.err.println("SpringBench: MSGCONTRACT_KAFKA_BROKERS is not set: run it through make bench-java-kafka");
      System.exit(2);
    }
    String ns = "sbench" + UUID.randomUUID().toString().substring(0, 8) + ".";
    Path dir = Files.createTempDirectory("msgcontract-spring-bench");
    publish(brokers, ns, n);
    System.out.printf("SpringBench: %d records of distinct keys on 6 partitions; %d rounds; SQLite files under %s%n",
        n, rounds, dir);
    run(true, brokers, ns, "warmup-spring", dir, n);
    run(false, brokers, ns, "warmup-loop", dir, n);
    List<Run> spring = new ArrayList<>();
    List<Run> loop = new ArrayList<>();
    for (int r = 0; r < rounds; r++) {
      for (boolean s : r % 2 == 0 ? new boolean[] {true, false} : new boolean[] {false, true}) {
        Run run = run(s, brokers, ns, "r" + r + (s ? "-spring" : "-loop"), dir, n);
        (s ? spring : loop).add(run);
        System.out.printf("round %d: %-10s %8.0f msg/s  %6.1f us CPU a message  (%.2f s)%n", r, run.mode(),
            run.rate(), run.cpuMicros(), run.seconds());
      }
    }
    double[] ratios = new double[rounds];
    for (int r = 0; r < rounds; r++) {
      ratios[r] = loop.get(r).rate() / spring.get(r).rate(); // time per message, spring over loop
    }
    double[] sorted = ratios.clone();
    Arrays.sort(sorted);
    System.out.printf("ratio spring/java-loop=%.2f (time per message, median of the rounds' own ratios; %.2f-%.2f;"
        + " same records, SQLite file, pool, handler and batch size)%n", median(ratios), sorted[0],
        sorted[sorted.length - 1]);
    System.out.printf("cpu per message: spring %.1f us, java-loop %.1f us (medians)%n",
        median(spring.stream().mapToDouble(Run::cpuMicros).toArray()),
        median(loop.stream().mapToDouble(Run::cpuMicros).toArray()));
    try (var files = Files.walk(dir)) {
      for (Path f : files.sorted(Comparator.reverseOrder()).toList()) {
        Files.delete(f);
      }
    }
  }

  /** Publishes n PaySuccess records of distinct order ids, Kafka key = biz_key. */
  private static void publish(String brokers, String ns, int n) throws Exception {
    KafkaConfig cfg = config(brokers, ns);
    try (KafkaPublisher pub = new KafkaPublisher(cfg)) {
      pub.publish(envelope(0)); // creates the topic
    }
    Properties p = new Properties();
    p.put("bootstrap.servers", brokers);
    p.put("acks", "all");
    p.put("linger.ms", "5");
    try (KafkaProducer<byte[], byte[]> prod = new KafkaProducer<>(p, new ByteArraySerializer(),
        new ByteArraySerializer())) {
      String topic = ns + PaymentContract.PaySuccess.SPEC.topic();
      for (int i = 1; i < n; i++) {
        Envelope env = envelope(i);
        prod.send(new ProducerRecord<>(topic, env.getBizKey().getBytes(StandardCharsets.UTF_8), Envelopes.encode(env)));
      }
      prod.flush();
    }
  }

  private static Envelope envelope(int i) throws Exception {
    PaySuccess m = PaySuccess.newBuilder().setOrderId(String.format("o%07d", i)).setAmount(100 + i).build();
    return Envelopes.newEnvelope(PaymentContract.PaySuccess.SPEC, m, System.currentTimeMillis());
  }

  private static KafkaConfig config(String brokers, String ns) {
    KafkaConfig cfg = new KafkaConfig();
    cfg.brokers = brokers;
    cfg.namespace = ns;
    cfg.partitions = 6;
    return cfg;
  }

  private static String url(Path db) {
    return "jdbc:sqlite:" + db + "?journal_mode=WAL&transaction_mode=IMMEDIATE&busy_timeout=5000";
  }

  private static Run run(boolean spring, String brokers, String ns, String name, Path dir, int n) throws Exception {
    Path db = dir.resolve(name + ".db");
    HikariConfig hc = new HikariConfig();
    hc.setJdbcUrl(url(db));
    hc.setMaximumPoolSize(4);
    try (HikariDataSource ds = new HikariDataSource(hc)) {
      try (Connection c = ds.getConnection(); Statement st = c.createStatement()) {
        DedupStore.migrate(c);
        st.execute("CREATE TABLE effects (biz_key TEXT NOT NULL, note TEXT NOT NULL)");
      }
      Run r;
      if (spring) {
        try (ConfigurableApplicationContext ctx = new SpringApplicationBuilder(App.class)
            .web(WebApplicationType.NONE)
            .properties("spring.main.banner-mode=off", "logging.level.root=WARN",
                "spring.datasource.url=" + url(db), "spring.datasource.hikari.maximum-pool-size=4",
                "spring.kafka.bootstrap-servers=" + brokers, "msgcontract.group=" + GROUP_PREFIX + name,
                "msgcontract.namespace=" + ns, "msgcontract.partitions=6")
            .run()) {
          ContractListenerContainers c = ctx.getBean(ContractListenerContainers.class);
          r = time("spring", () -> c.counts(GROUP_PREFIX + name)[0], n);
        }
      } else {
        KafkaConsumerLoop loop = new KafkaConsumerLoop(config(brokers, ns), GROUP_PREFIX + name, ds::getConnection);
        loop.register(PaymentContract.PaySuccess.SPEC, "record-payment", (tx, m, env) -> insert(tx, m));
        List<Throwable> errors = new ArrayList<>();
        Thread t = new Thread(() -> {
          try {
            loop.run();
          } catch (Throwable e) {
            errors.add(e);
          }
        }, "java-loop");
        t.start();
        try {
          r = time("java-loop", loop::handled, n);
        } finally {
          loop.close();
          t.join();
        }
        if (!errors.isEmpty()) {
          throw new IllegalStateException("java-loop failed", errors.get(0));
        }
      }
      try (Connection c = ds.getConnection(); Statement st = c.createStatement();
          ResultSet rs = st.executeQuery("SELECT count(*), count(DISTINCT biz_key) FROM effects")) {
        rs.next();
        if (rs.getInt(1) != n || rs.getInt(2) != n) {
          throw new IllegalStateException(name + ": " + rs.getInt(1) + " rows of " + rs.getInt(2) + " keys, want " + n);
        }
      }
      return r;
    }
  }

  /** Times handled from its first delivery to its n-th. */
  private static Run time(String mode, LongSupplier handled, int n) throws InterruptedException {
    long deadline = System.nanoTime() + 600_000_000_000L;
    while (handled.getAsLong() == 0) {
      check(deadline, mode);
      Thread.sleep(1);
    }
    long t0 = System.nanoTime();
    long cpu0 = cpuNanos();
    long before = handled.getAsLong(); // a batch may have settled many at once
    while (handled.getAsLong() < n) {
      check(deadline, mode);
      Thread.sleep(1);
    }
    long t1 = System.nanoTime();
    long cpu1 = cpuNanos();
    return new Run(mode, (t1 - t0) / 1e9, (cpu1 - cpu0) / 1e9, (int) (n - before));
  }

  private static void check(long deadline, String mode) {
    if (System.nanoTime() > deadline) {
      throw new IllegalStateException(mode + ": not done in 10 minutes");
    }
  }

  private static long cpuNanos() {
    return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
        .getProcessCpuTime();
  }

  private static double median(double[] xs) {
    double[] s = xs.clone();
    Arrays.sort(s);
    return s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
  }
}
