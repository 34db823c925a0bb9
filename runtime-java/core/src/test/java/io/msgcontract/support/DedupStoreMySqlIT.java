package io.msgcontract.support;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * DedupStore and TxCheck on MySQL/MariaDB, in a database of its own on the server that
 * MSGCONTRACT_MYSQL_DSN (a mysql://user:password@host:port/db URL, set by
 * scripts/with-mariadb.sh) names. Not part of the default build (the name
 * ends in IT); make test-mysql runs it, and fails when the variable is unset.
 */
class DedupStoreMySqlIT {
  private String base;
  private String database;
  private Connection conn;

  @BeforeEach
  void open() throws SQLException {
    String dsn = System.getenv("MSGCONTRACT_MYSQL_DSN");
    assertNotNull(dsn, "MSGCONTRACT_MYSQL_DSN is unset: run under scripts/with-mariadb.sh (make test-mysql)");
    URI u = URI.create(dsn);
    String[] user = u.getUserInfo().split(":", 2);
    base = "jdbc:mariadb://" + u.getHost() + ":" + u.getPort() + "/?user=" + user[0]
        + "&password=" + (user.length > 1 ? user[1] : "");
    database = "t_java_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
    try (Connection admin = DriverManager.getConnection(base); Statement st = admin.createStatement()) {
      st.execute("CREATE DATABASE " + database + " CHARACTER SET utf8mb4");
    }
    conn = DriverManager.getConnection(base.replace("/?", "/" + database + "?"));
    conn.setAutoCommit(false);
  }

  @AfterEach
  void close() throws SQLException {
    if (conn == null) {
      return;
    }
    conn.close();
    try (Connection admin = DriverManager.getConnection(base); Statement st = admin.createStatement()) {
      st.execute("DROP DATABASE " + database);
    }
  }

  /** The check-back's answers from msg_tx_check, as TxCheckTest checks them on SQLite. */
  @Test
  void txCheckAnswersFromTheTable() throws SQLException {
    long stored = 1_700_000_000_000L;
    long window = 60_000;
    TxCheck.migrate(conn, Ddl.MYSQL);
    TxCheck.migrate(conn, Ddl.MYSQL); // idempotent
    TxCheck.record(conn, "committed", "payment-callback", stored);
    conn.commit();
    TxCheck.record(conn, "rolled-back", "payment-callback", stored);
    conn.rollback();
    assertEquals(TxCheck.Answer.COMMIT, TxCheck.check(conn, "committed", stored, stored + 1000, window));
    assertEquals(TxCheck.Answer.UNKNOWN, TxCheck.check(conn, "rolled-back", stored, stored + window - 1, window));
    assertEquals(TxCheck.Answer.ROLLBACK, TxCheck.check(conn, "rolled-back", stored, stored + window, window));
    assertEquals(TxCheck.Answer.ROLLBACK, TxCheck.check(conn, "", stored, stored + 1000, window));
    assertEquals(0, TxCheck.prune(conn, stored + TxCheck.RETENTION_MS - 1));
    assertEquals(1, TxCheck.prune(conn, stored + TxCheck.RETENTION_MS + 1));
    conn.commit();
    assertEquals(TxCheck.Answer.UNKNOWN, TxCheck.check(conn, "committed", stored, stored + 1000, window));
  }

  @Test
  void claimCommitsAndRollsBackWithTheTransaction() throws SQLException {
    assertTrue(DedupStore.isMySql(conn));
    DedupStore.migrate(conn);
    DedupStore.migrate(conn); // idempotent
    assertTrue(DedupStore.claim(conn, "order:1", "h", "m0", "p", 1L));
    conn.rollback();
    assertTrue(DedupStore.claim(conn, "order:1", "h", "m1", "p", 2L), "a rolled-back claim must not block");
    conn.commit();
    // The duplicate fails its statement only: the transaction goes on.
    assertFalse(DedupStore.claim(conn, "order:1", "h", "m2", "p", 3L));
    assertTrue(DedupStore.claim(conn, "order:2", "h", "m3", "p", 4L));
    conn.commit();
    try (Statement st = conn.createStatement();
        ResultSet rs = st.executeQuery("SELECT message_id FROM msg_dedup ORDER BY created_at")) {
      assertTrue(rs.next());
      assertEquals("m1", rs.getString(1));
      assertTrue(rs.next());
      assertEquals("m3", rs.getString(1));
      assertFalse(rs.next());
    }
  }

  /**
   * The retry chain's statements on MariaDB: RetryChainTest's walk (a forked
   * chain, a replay, cleanup). The driver counts found rows, so an UPDATE to
   * the values the row holds counts 1; a server that counts changed rows goes
   * through the read-back instead, which the walk's redeliveries take either way.
   */
  @Test
  void retryChainAdvancesAsOnSqlite() throws SQLException {
    DedupStore.migrate(conn);
    DedupStore.migrate(conn); // idempotent, the chain table's index included
    conn.commit();
    RetryChainTest.walk(conn);
    assertFalse(conn.getAutoCommit(), "advance did not put the connection's mode back");
  }

  @Test
  void keysAreBytes() throws SQLException {
    DedupStore.migrate(conn);
    for (String k : new String[] {"order:a", "order:A", "order:a ", "order:\u00e4"}) {
      assertTrue(DedupStore.claim(conn, k, "h", "m", "p", 1L), k);
    }
    conn.commit();
  }
}
