package io.msgcontract.support;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The retry chain's rule and statements on SQLite; DedupStoreMySqlIT runs the statements on MariaDB. */
class RetryChainTest {
  private Connection conn;

  @BeforeEach
  void open() throws SQLException {
    conn = DriverManager.getConnection("jdbc:sqlite::memory:");
    DedupStore.migrate(conn);
  }

  @AfterEach
  void close() throws SQLException {
    conn.close();
  }

  static ChainPos pos(int replays, int attempt, String id) {
    return new ChainPos(replays, attempt, id);
  }

  private record Case(String name, ChainPos went, ChainPos cur, boolean want) {}

  /** runtime-go's TestSuperseded, case for case (docs/DESIGN.md, "One retry chain per message"). */
  @Test
  void supersededDecidesAsGoDoes() {
    for (Case c : List.of(
        new Case("the first delivery redelivered before it went on", pos(0, 0, "T/0/1"), pos(0, 0, "T/0/1"), false),
        new Case("a producer's duplicate of a first delivery that went on", pos(0, 0, "T/0/1"), pos(0, 0, "T/1/8"),
            true),
        new Case("the first delivery redelivered after its retry went on", pos(0, 1, "R/0/4"), pos(0, 0, "T/0/1"),
            true),
        new Case("a later attempt went on", pos(0, 3, "R/1/7"), pos(0, 2, "R/1/5"), true),
        new Case("this attempt went on under another copy", pos(0, 2, "R/1/5"), pos(0, 2, "R/1/6"), true),
        new Case("this copy went on (redelivered)", pos(0, 2, "R/1/5"), pos(0, 2, "R/1/5"), false),
        new Case("an earlier attempt went on", pos(0, 1, "R/0/2"), pos(0, 2, "R/1/5"), false),
        new Case("a replay after the chain died", pos(0, 3, "R/0/9"), pos(1, 0, "R/0/12"), false),
        new Case("a stale copy of the chain before the replay", pos(1, 0, "R/0/12"), pos(0, 3, "R/0/9"), true),
        new Case("a later attempt of the replay", pos(1, 0, "R/0/12"), pos(1, 1, "R/0/13"), false))) {
      assertEquals(c.want(), RetryChain.superseded(c.went(), c.cur()), c.name());
    }
  }

  /**
   * runtime-go's testAdvance, step for step: one message's chain through a
   * fork (two copies of attempt 1, the redelivery of the one that went on, a
   * late copy of an earlier attempt), a replay, and cleanup.
   */
  @Test
  void advanceWalksAForkedChainAsGoDoes() throws SQLException {
    conn.setAutoCommit(false); // as the consumer leaves it: advance runs its statements on their own
    walk(conn);
    assertFalse(conn.getAutoCommit(), "advance did not put the connection's mode back");
  }

  /** The walk of {@link #advanceWalksAForkedChainAsGoDoes} on conn, whose tables are fresh. */
  static void walk(Connection conn) throws SQLException {
    long now = 1_900_000_000_000L;
    assertNull(RetryChain.row(conn, "h", "m1"), "a row before any step");
    step(conn, pos(0, 0, "T/0/1"), true, pos(0, 0, "T/0/1"));
    step(conn, pos(0, 0, "T/0/1"), true, pos(0, 0, "T/0/1")); // redelivered: the same values
    step(conn, pos(0, 0, "T/1/3"), false, pos(0, 0, "T/0/1")); // a producer's duplicate
    step(conn, pos(0, 1, "R/0/4"), true, pos(0, 1, "R/0/4"));
    step(conn, pos(0, 1, "R/0/5"), false, pos(0, 1, "R/0/4")); // the fork stops
    step(conn, pos(0, 1, "R/0/4"), true, pos(0, 1, "R/0/4")); // the copy that went on, again
    step(conn, pos(0, 0, "T/0/1"), false, pos(0, 1, "R/0/4")); // the first delivery, after its retry went on
    step(conn, pos(0, 2, "R/0/9"), true, pos(0, 2, "R/0/9"));
    step(conn, pos(0, 1, "R/0/4"), false, pos(0, 2, "R/0/9")); // overtaken
    // Another message's chain is its own.
    assertTrue(RetryChain.advance(conn, "h", "m2", pos(0, 1, "R/0/5"), now).ok(), "another message");
    step(conn, pos(1, 0, "R/1/2"), true, pos(1, 0, "R/1/2")); // a replay starts afresh
    step(conn, pos(0, 3, "R/0/11"), false, pos(1, 0, "R/1/2"));
    step(conn, pos(1, 1, "R/1/3"), true, pos(1, 1, "R/1/3"));
    assertEquals(pos(1, 1, "R/1/3"), RetryChain.row(conn, "h", "m1"));
    // Cleanup with the claims' retention (an hour here), two hours later.
    boolean auto = conn.getAutoCommit();
    conn.setAutoCommit(true);
    try (PreparedStatement st = conn.prepareStatement(RetryChain.DELETE_OLD)) {
      st.setLong(1, now + 2 * 3_600_000L - 3_600_000L);
      assertEquals(2, st.executeUpdate());
    } finally {
      conn.setAutoCommit(auto);
    }
    assertNull(RetryChain.row(conn, "h", "m1"), "a row after cleanup");
  }

  private static void step(Connection conn, ChainPos p, boolean wantOk, ChainPos want)
      throws SQLException {
    RetryChain.Advance a = RetryChain.advance(conn, "h", "m1", p, 1_900_000_000_000L);
    assertEquals(new RetryChain.Advance(wantOk, want), a, "advance(" + p + ")");
  }

  @Test
  void aDatabaseFailureNamesTheStep() {
    SQLException e = org.junit.jupiter.api.Assertions.assertThrows(SQLException.class, () -> {
      try (var st = conn.createStatement()) {
        st.execute("DROP TABLE " + RetryChain.TABLE);
      }
      RetryChain.advance(conn, "h", "m1", pos(0, 0, "T/0/1"), 1);
    });
    assertTrue(e.getMessage().startsWith("msgcontract: advance retry chain: "), e.getMessage());
  }
}
