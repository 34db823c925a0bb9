package io.msgcontract.kafka;

import io.msgcontract.support.DedupStore;
import io.msgcontract.support.Envelopes;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import org.apache.kafka.clients.producer.ProducerRecord;

/**
 * {@code make bench-java-kafka} (bench/java-kafka/run.sh): KafkaConsumerLoop
 * with its default batchSize (64) against batchSize 1 (a transaction per
 * delivery) on the same records of a real broker, side by side in one run.
 *
 * <p>It publishes -n records (10,000 by default) of distinct biz_keys (each
 * a payment of its own, Kafka key = biz_key) to a 6-partition topic once,
 * runs both modes once untimed (warm-up), then in each of -rounds rounds (3)
 * runs both modes, in alternating order, each as a new group (so from the
 * first offset) into a fresh SQLite file (WAL, immediate transactions, as
 * Fixture.open and a service would configure it; SQLite's default
 * synchronous FULL, so a commit is durable; removed at the end), with a
 * handler that inserts one row. A run is timed from its first handled
 * delivery to its last (the group's join and what settled with the first
 * are left out), with the process's CPU over the same span; every run checks
 * that each record left exactly one row. The comparison runs twice: with one
 * connection reused for every transaction (as a pool hands them out), then
 * with a new DriverManager connection a transaction (what the loop gets from
 * a ConnectionFactory such as {@code () -> DriverManager.getConnection(url)}).
 * It prints each run, then for each
 *
 * <pre>
 * ratio batch/per-delivery pooled=X (msg/s, median of the rounds' own ratios; LO-HI; ...)
 * cpu per message pooled: batch Y us, per-delivery Z us (medians)
 * </pre>
 *
 * Nothing is asserted: the figures are measured and printed.
 */
final class LoopBench {
  private LoopBench() {}

  private record Run(String mode, double seconds, double cpuSeconds, int n) {
    double rate() {
      return n / seconds;
    }

    double cpuMicros() {
      return cpuSeconds * 1e6 / n;
    }
  }

  public static void main(String[] args) throws Exception {
    int n = 10000;
    int rounds = 3;
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "-n" -> n = Integer.parseInt(args[++i]);
        case "-rounds" -> rounds = Integer.parseInt(args[++i]);
        default -> {
          System.err.println("usage: LoopBench [-n RECORDS] [-rounds R]   (unknown argument " + args[i] + ")");
          System.exit(2);
        }
      }
    }
    String brokers = System.getenv("MSGCONTRACT_KAFKA_BROKERS");
    if (brokers == null || brokers.isEmpty()) {
      System.err.println("LoopBench: MSGCONTRACT_KAFKA_BROKERS is not set: run it through make bench-java-kafka");
      System.exit(2);
    }
    KafkaConfig cfg = new KafkaConfig();
    cfg.brokers = brokers;
    cfg.namespace = "bench" + UUID.randomUUID().toString().substring(0, 8) + ".";
    cfg.partitions = 6;
    Path dir = Files.createTempDirectory("msgcontract-loop-bench");
    publish(cfg, n);
    System.out.printf("LoopBench: %d records of distinct keys on %d partitions; %d rounds; SQLite files under %s%n",
        n, cfg.partitions, rounds, dir);
    // One untimed pair first: the JIT compiles the loop's and the drivers'
    // paths (the first timed batch run came out at half the later ones).
    for (int size : new int[] {cfg.batchSize, 1}) {
      run(cfg, size, true, "warmup", dir, n);
    }
    for (boolean pooled : new boolean[] {true, false}) {
      String conns = pooled ? "one connection reused, as from a pool" : "a new DriverManager connection a transaction";
      List<Run> batch = new ArrayList<>();
      List<Run> single = new ArrayList<>();
      for (int r = 0; r < rounds; r++) {
        for (int size : r % 2 == 0 ? new int[] {cfg.batchSize, 1} : new int[] {1, cfg.batchSize}) {
          Run run = run(cfg, size, pooled, "r" + r, dir, n);
          (size == 1 ? single : batch).add(run);
          System.out.printf("%s, round %d: %-12s %8.0f msg/s  %6.1f us CPU a message  (%.2f s)%n", pooled ? "pooled"
              : "unpooled", r, run.mode(), run.rate(), run.cpuMicros(), run.seconds());
        }
      }
      double[] ratios = new double[rounds];
      for (int r = 0; r < rounds; r++) {
        ratios[r] = batch.get(r).rate() / single.get(r).rate();
      }
      double[] sorted = ratios.clone();
      Arrays.sort(sorted);
      System.out.printf("ratio batch/per-delivery %s=%.2f (msg/s, median of the rounds' own ratios; %.2f-%.2f; %s)%n",
          pooled ? "pooled" : "unpooled", median(ratios), sorted[0], sorted[sorted.length - 1], conns);
      System.out.printf("cpu per message %s: batch %.1f us, per-delivery %.1f us (medians)%n",
          pooled ? "pooled" : "unpooled", median(batch.stream().mapToDouble(Run::cpuMicros).toArray()),
          median(single.stream().mapToDouble(Run::cpuMicros).toArray()));
    }
    try (var files = Files.walk(dir)) {
      for (Path f : files.sorted(java.util.Comparator.reverseOrder()).toList()) {
        Files.delete(f);
      }
    }
  }

  /**
   * One connection to db, opened at the first call, handed out again and
   * again as a pool would: closing it rolls back what is left open and keeps
   * it. Closed by the caller of reused through the returned holder.
   */
  private static final class Reused implements ConnectionFactory, AutoCloseable {
    private final Path db;
    private Connection conn;

    Reused(Path db) {
      this.db = db;
    }

    @Override
    public Connection open() throws SQLException {
      if (conn == null) {
        conn = Fixture.open(db);
      }
      Connection c = conn;
      return Fixture.intercept(c, method -> {
        if (!method.equals("close")) {
          return false;
        }
        if (!c.getAutoCommit()) {
          c.rollback();
        }
        c.setAutoCommit(true);
        return true;
      });
    }

    @Override
    public void close() throws SQLException {
      if (conn != null) {
        conn.close();
      }
    }
  }

  /** Publishes n records, v0..v(n-1), each its own biz_key and Kafka key. */
  private static void publish(KafkaConfig cfg, int n) {
    try (KafkaPublisher pub = new KafkaPublisher(cfg)) {
      pub.publish(Fixture.envelope("v0")); // creates the topic
      List<ProducerRecord<byte[], byte[]>> recs = new ArrayList<>();
      String topic = pub.topics().topic(Fixture.TOPIC);
      for (int i = 1; i < n; i++) {
        String key = "v" + i;
        recs.add(new ProducerRecord<>(topic, key.getBytes(StandardCharsets.UTF_8),
            Envelopes.encode(Fixture.envelope(key))));
        if (recs.size() == 1000 || i == n - 1) {
          pub.sendAll(recs);
          recs.clear();
        }
      }
    }
  }

  private static Run run(KafkaConfig base, int batchSize, boolean pooled, String round, Path dir, int n)
      throws Exception {
    KafkaConfig cfg = copy(base);
    cfg.batchSize = batchSize;
    String mode = batchSize == 1 ? "per-delivery" : "batch " + batchSize;
    String name = round + "-" + batchSize + (pooled ? "-pooled" : "");
    Path db = dir.resolve(name + ".db");
    try (Connection c = Fixture.open(db); Statement st = c.createStatement()) {
      DedupStore.migrate(c);
      st.execute("CREATE TABLE effects (biz_key TEXT NOT NULL, note TEXT NOT NULL)");
    }
    try (Reused reused = new Reused(db)) {
      ConnectionFactory conns = pooled ? reused : () -> Fixture.open(db);
      return run(new KafkaConsumerLoop(cfg, "bench-" + name, conns), mode, db, n);
    }
  }

  private static Run run(KafkaConsumerLoop loop, String mode, Path db, int n) throws Exception {
    loop.register(Fixture.SPEC, Fixture.HANDLER, (tx, m, env) -> {
      try (PreparedStatement ps = tx.prepareStatement("INSERT INTO effects (biz_key, note) VALUES (?, ?)")) {
        ps.setString(1, m.getValue());
        ps.setString(2, "bench");
        ps.executeUpdate();
      }
    });
    List<Throwable> errors = new ArrayList<>();
    Thread t = Fixture.start(loop, errors);
    long deadline = System.nanoTime() + 600_000_000_000L;
    while (loop.handled() == 0) {
      check(errors, deadline, mode);
      Thread.sleep(1);
    }
    long t0 = System.nanoTime();
    long cpu0 = cpuNanos();
    long before = loop.handled(); // a batch may have settled many at once
    while (loop.handled() < n) {
      check(errors, deadline, mode);
      Thread.sleep(1);
    }
    long t1 = System.nanoTime();
    long cpu1 = cpuNanos();
    loop.close();
    t.join();
    if (!errors.isEmpty()) {
      throw new IllegalStateException(mode + ": the loop failed", errors.get(0));
    }
    try (Connection c = Fixture.open(db); Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SELECT count(*), count(DISTINCT biz_key) FROM effects")) {
      rs.next();
      if (rs.getInt(1) != n || rs.getInt(2) != n) {
        throw new IllegalStateException(mode + ": " + rs.getInt(1) + " rows of " + rs.getInt(2) + " keys, want " + n);
      }
    }
    // What settled before the span began is not counted.
    return new Run(mode, (t1 - t0) / 1e9, (cpu1 - cpu0) / 1e9, (int) (n - before));
  }

  private static void check(List<Throwable> errors, long deadline, String mode) {
    if (!errors.isEmpty()) {
      throw new IllegalStateException(mode + ": the loop failed", errors.get(0));
    }
    if (System.nanoTime() > deadline) {
      throw new IllegalStateException(mode + ": not done in 10 minutes");
    }
  }

  private static KafkaConfig copy(KafkaConfig b) {
    KafkaConfig c = new KafkaConfig();
    c.brokers = b.brokers;
    c.namespace = b.namespace;
    c.partitions = b.partitions;
    return c;
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
