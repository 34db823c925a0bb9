package io.msgcontract.support;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The check-back's answers from msg_tx_check, the cases of runtime-go's txcheck test; SQLite, no broker. */
class TxCheckTest {
  private record Case(String id, long ageMs, TxCheck.Answer want) {}

  @Test
  void checkAnswersFromTheTable() throws SQLException {
    long stored = 1_700_000_000_000L;
    long window = 60_000;
    Connection c = DriverManager.getConnection("jdbc:sqlite::memory:");
    try {
      TxCheck.migrate(c, Ddl.SQLITE);
      // "committed" is recorded in a transaction that commits, "rolled-back" in one that rolls back.
      c.setAutoCommit(false);
      for (Map.Entry<String, Boolean> e : Map.of("committed", true, "rolled-back", false).entrySet()) {
        TxCheck.record(c, e.getKey(), "payment-callback", stored);
        if (e.getValue()) {
          c.commit();
        } else {
          c.rollback();
        }
      }
      c.setAutoCommit(true);
      for (Case k : List.of(new Case("committed", 1_000, TxCheck.Answer.COMMIT),
          new Case("committed", 3_600_000, TxCheck.Answer.COMMIT),
          new Case("rolled-back", 1_000, TxCheck.Answer.UNKNOWN),
          new Case("rolled-back", window - 1, TxCheck.Answer.UNKNOWN),
          new Case("rolled-back", window, TxCheck.Answer.ROLLBACK),
          new Case("never-recorded", 2 * window, TxCheck.Answer.ROLLBACK),
          new Case("", 1_000, TxCheck.Answer.ROLLBACK))) {
        assertEquals(k.want(), TxCheck.check(c, k.id(), stored, stored + k.ageMs(), window), k.toString());
      }
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> TxCheck.record(c, "", "t", stored));
      assertTrue(e.getMessage().contains("no message id"), e.getMessage());
      assertEquals(stored + 30_000, TxCheck.deadline(stored, window));

      // prune keeps a row younger than the retention and deletes an older one.
      assertEquals(0, TxCheck.prune(c, stored + TxCheck.RETENTION_MS - 1_000));
      assertEquals(1, TxCheck.prune(c, stored + TxCheck.RETENTION_MS + 1_000));
      assertEquals(TxCheck.Answer.UNKNOWN, TxCheck.check(c, "committed", stored, stored + 1_000, window), "after prune");
    } finally {
      c.close();
    }
    // A database that fails answers UNKNOWN (and logs the error), even where no row would answer ROLLBACK.
    assertEquals(TxCheck.Answer.UNKNOWN, TxCheck.check(c, "committed", stored, stored + 2 * window, window));
  }

  @Test
  void recordWithoutTheTableSaysToMigrate() throws SQLException {
    try (Connection c = DriverManager.getConnection("jdbc:sqlite::memory:")) {
      SQLException e = assertThrows(SQLException.class, () -> TxCheck.record(c, "m1", "t", 1));
      assertTrue(e.getMessage().contains("did you run TxCheck.migrate?"), e.getMessage());
    }
  }
}
