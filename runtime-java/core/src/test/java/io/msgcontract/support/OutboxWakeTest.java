package io.msgcontract.support;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.msgcontract.v1.Envelope;
import java.net.URI;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A relay whose poll interval is an hour still publishes a committed row at once when it is woken:
 * by {@link OutboxRelay#notifyCommitted} from the producer's process, and on PostgreSQL by an
 * {@link OutboxNotifier}'s NOTIFY from another connection, as from another process
 * (integration/runtime/outbox/wake_test.go for Go). Without the wake-up nothing is published
 * within the test's minute. The PostgreSQL cases need
 * the cluster of scripts/with-postgres.sh (make check-java starts one).
 */
class OutboxWakeTest {
  private static final long HOUR_MS = 3_600_000;
  private static final long WAIT_MS = 60_000;

  @TempDir Path dir;

  @Test
  void sqliteWakesOnNotifyCommitted() throws Exception {
    String url = "jdbc:sqlite:" + dir.resolve("outbox.db");
    check(() -> DriverManager.getConnection(url), Ddl.SQLITE, true);
  }

  @Test
  void postgresWakesOnNotifyCommitted() throws Exception {
    try (PgSchema pg = new PgSchema()) {
      check(pg::open, Ddl.POSTGRES, true);
    }
  }

  @Test
  void postgresWakesOnANotifierOfAnotherConnection() throws Exception {
    try (PgSchema pg = new PgSchema()) {
      check(pg::open, Ddl.POSTGRES, false);
    }
  }

  /**
   * Runs a relay with an hour's poll interval on db, then writes three rows, one transaction each,
   * on a connection of their own (another process's, as far as the relay can tell), calling the
   * relay's notifyCommitted after each commit when notify, else an {@link OutboxNotifier}'s, and
   * waits for each to be published.
   */
  private static void check(ConnectionFactory db, String dialect, boolean notify) throws Exception {
    try (Connection c = db.open()) {
      Outbox.migrate(c, dialect);
    }
    List<String> published = new CopyOnWriteArrayList<>();
    OutboxRelay relay = new OutboxRelay(db, (topic, key, body) -> published.add(key), 10_000, 100, null);
    CountDownLatch firstPass = new CountDownLatch(1);
    Thread t = new Thread(() -> {
      try {
        relay.run(HOUR_MS, n -> firstPass.countDown());
      } catch (InterruptedException e) {
        // stopped
      }
    }, "wake-test-relay");
    t.start();
    try {
      // The first pass finds nothing; from then on the relay waits out its hour unless woken (the
      // LISTEN thread's own first wake-up included: give it time to pass).
      assertTrue(firstPass.await(WAIT_MS, TimeUnit.MILLISECONDS), "no first pass");
      Thread.sleep(500);
      try (Connection w = db.open(); OutboxNotifier notifier = notify ? null : new OutboxNotifier(db)) {
        w.setAutoCommit(false);
        for (int i = 0; i < 3; i++) {
          String key = "k" + (i + 1);
          Outbox.write(w, Envelope.newBuilder().setMessageId(UUID.randomUUID().toString()).setBizKey(key)
              .setEventType("E").setTopic("t").build());
          w.commit();
          if (notify) {
            relay.notifyCommitted();
          } else {
            notifier.notifyCommitted();
          }
          waitFor(() -> published.contains(key));
        }
      }
      assertEquals(List.of("k1", "k2", "k3"), published);
      try (Connection c = db.open()) {
        assertEquals(0, Outbox.pending(c));
      }
    } finally {
      t.interrupt();
      t.join(WAIT_MS);
    }
    assertTrue(!t.isAlive(), "the relay did not stop on interrupt");
  }

  private static void waitFor(BooleanSupplier cond) throws InterruptedException {
    for (long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(WAIT_MS); !cond.getAsBoolean(); ) {
      if (System.nanoTime() > deadline) {
        fail("not woken: the relay waited out its poll interval");
      }
      Thread.sleep(10);
    }
  }

  /** A schema of its own on the PostgreSQL of MSGCONTRACT_PG_DSN, dropped on close. */
  private static final class PgSchema implements AutoCloseable {
    final String schema = "wake_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
    final String url;
    final String user;
    final String password;

    PgSchema() throws SQLException {
      String dsn = System.getenv("MSGCONTRACT_PG_DSN");
      if (dsn == null || dsn.isEmpty()) {
        fail("MSGCONTRACT_PG_DSN is not set: run the tests under scripts/with-postgres.sh (make check-java)");
      }
      URI u = URI.create(dsn);
      String[] ui = u.getUserInfo().split(":", 2);
      user = ui[0];
      password = ui.length > 1 ? ui[1] : "";
      url = "jdbc:postgresql://" + u.getHost() + ":" + u.getPort() + u.getPath();
      try (Connection c = DriverManager.getConnection(url, user, password); Statement st = c.createStatement()) {
        st.execute("CREATE SCHEMA " + schema);
      }
    }

    Connection open() throws SQLException {
      Connection c = DriverManager.getConnection(url, user, password);
      try (Statement st = c.createStatement()) {
        st.execute("SET search_path TO " + schema);
      }
      return c;
    }

    @Override
    public void close() throws SQLException {
      try (Connection c = open(); Statement st = c.createStatement()) {
        st.execute("DROP SCHEMA " + schema + " CASCADE");
      }
    }
  }
}
