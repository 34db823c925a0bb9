package io.msgcontract.support;

import java.lang.System.Logger.Level;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

/**
 * The business database's side of a broker's transactional (half) messages,
 * the outbox's alternative on RocketMQ, as runtime-go's txcheck package (the
 * table msg_tx_check, by the statements of contracts/sql): the producer
 * stores a half message the broker withholds from consumers, runs the
 * business transaction, and commits or rolls the message back. {@link
 * #record} writes the message id in that business transaction, so the row
 * exists exactly when the business change commits; when the producer's
 * verdict does not reach the broker (a crash, a lost request), the broker
 * asks a producer of the topic again, and {@link #check} answers from the row.
 *
 * <p>The rule, the same in Go, Java and Python: a row for the message id:
 * COMMIT; no row, and the half message is younger than the unresolved
 * window: UNKNOWN (the broker asks again later); no row, and older:
 * ROLLBACK. Rollback is safe only if no business transaction commits its row
 * after the window: a producer commits only while less than half the window
 * has passed since the half message was sent ({@link #deadline}), and rolls
 * back otherwise.
 */
public final class TxCheck {
  /** The check-back table's name. */
  public static final String TABLE = "msg_tx_check";
  /**
   * The default unresolved window, in ms: how long after a half message was
   * sent a check-back that finds no row still answers UNKNOWN.
   */
  public static final long DEFAULT_UNRESOLVED_MS = 60_000;
  /**
   * How long a row is kept, in ms: once the broker has the verdict (its
   * check-backs stop after transactionCheckMax tries, 15 by default,
   * transactionCheckInterval apart, 30 s by default), a row answers nothing.
   */
  public static final long RETENTION_MS = 24L * 3600 * 1000;

  private static final System.Logger LOG = System.getLogger(TxCheck.class.getName());

  /** A check-back's verdict on a half message. */
  public enum Answer {
    /** Ask again later. */
    UNKNOWN,
    /** Deliver the message. */
    COMMIT,
    /** Discard the message. */
    ROLLBACK
  }

  private TxCheck() {}

  /**
   * Creates the check-back table if it does not exist ({@link Ddl}; dialect
   * {@link Ddl#SQLITE}, {@link Ddl#POSTGRES} or {@link Ddl#MYSQL}), and
   * commits when conn is not in auto-commit.
   */
  public static void migrate(Connection conn, String dialect) throws SQLException {
    Ddl.migrate(conn, dialect, TABLE);
    if (!conn.getAutoCommit()) {
      conn.commit();
    }
  }

  /**
   * Writes messageId (the envelope's message id) and its topic within tx,
   * the business transaction of the half message, which the caller commits.
   *
   * @throws IllegalArgumentException when messageId is empty
   * @throws SQLException when the insert failed (the table missing: run {@link #migrate})
   */
  public static void record(Connection tx, String messageId, String topic, long nowMs) throws SQLException {
    if (messageId == null || messageId.isEmpty()) {
      throw new IllegalArgumentException("txcheck: the half message has no message id");
    }
    try (PreparedStatement st = tx.prepareStatement("INSERT INTO " + TABLE
        + " (message_id, topic, created_at) VALUES (?, ?, ?)")) {
      st.setString(1, messageId);
      st.setString(2, topic);
      st.setLong(3, nowMs);
      st.executeUpdate();
    } catch (SQLException e) {
      throw new SQLException("txcheck: record " + messageId + " (did you run TxCheck.migrate?): " + e.getMessage(),
          e.getSQLState(), e.getErrorCode(), e);
    }
  }

  /**
   * When a producer stops committing the business transaction of a half
   * message sent at storedMs: half the unresolved window later (UTC epoch ms).
   */
  public static long deadline(long storedMs, long unresolvedMs) {
    return storedMs + unresolvedMs / 2;
  }

  /**
   * Answers the broker's check-back for the half message messageId, sent at
   * storedMs (the message's born time), at nowMs. A database error is logged
   * and answers UNKNOWN: the broker asks again.
   */
  public static Answer check(Connection c, String messageId, long storedMs, long nowMs, long unresolvedMs) {
    if (messageId == null || messageId.isEmpty()) {
      return Answer.ROLLBACK; // not an envelope of ours: nothing will ever record it
    }
    try (PreparedStatement st = c.prepareStatement("SELECT 1 FROM " + TABLE + " WHERE message_id = ?")) {
      st.setString(1, messageId);
      try (ResultSet rs = st.executeQuery()) {
        if (rs.next()) {
          return Answer.COMMIT;
        }
      }
    } catch (SQLException e) {
      LOG.log(Level.WARNING, "msgcontract: txcheck: look up " + messageId + " failed; answering UNKNOWN (the broker"
          + " asks again): " + e.getMessage(), e);
      return Answer.UNKNOWN;
    }
    return nowMs - storedMs < unresolvedMs ? Answer.UNKNOWN : Answer.ROLLBACK;
  }

  /**
   * Deletes the rows written more than {@link #RETENTION_MS} before nowMs
   * and returns how many, in c's transaction (at once in auto-commit). A
   * producer calls it now and then.
   */
  public static int prune(Connection c, long nowMs) throws SQLException {
    try (PreparedStatement st = c.prepareStatement("DELETE FROM " + TABLE + " WHERE created_at < ?")) {
      st.setLong(1, nowMs - RETENTION_MS);
      return st.executeUpdate();
    } catch (SQLException e) {
      throw new SQLException("txcheck: prune: " + e.getMessage(), e.getSQLState(), e.getErrorCode(), e);
    }
  }
}
