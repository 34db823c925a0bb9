package io.msgcontract.support;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

/**
 * One retry chain per message (docs/DESIGN.md, "One retry chain per message"), as runtime-go's
 * {@code dedup/chain.go} keeps it: the chain table shared with the Go and Python runtimes, the
 * rule ({@link #superseded}), and its statements.
 *
 * <p>A retry chain is the sequence of copies one message goes through on its way to an effect or
 * a dead letter: the delivery, then the retry copy of each failed attempt. On a transport that
 * publishes the retry copy and then settles the delivery in a second step (Kafka: produce, then
 * commit the offset), a crash or a rebalance between the two delivers the same copy again, it
 * fails again, and a second copy of the next attempt is published: the chain forks, and each
 * branch would retry and be dead-lettered on its own.
 *
 * <p>The table keeps, per (handler, message_id), the place ({@link ChainPos}) of the last copy that
 * failed and went on to a retry or a dead letter. Before a copy's failure goes on, {@link
 * #advance} moves the row forward; a copy is superseded, and is settled without going on, when
 * another copy of the same place or a later one already went on. A redelivery of the copy that
 * went on (the same delivery id) is not superseded: its retry may not have been published before
 * the crash. A producer's duplicate of the first delivery is superseded like a second retry copy,
 * once the original went on; a replay of a dead letter carries a higher replay_count and starts a
 * chain afresh.
 *
 * <p>Effects never depended on this: the claim already makes a second branch's success a
 * duplicate. The chain keeps the retry topics, the dead-letter store and the retry metrics to one
 * branch per message.
 */
public final class RetryChain {
  /** The chain table's default name: the claim table's + "_chain". */
  public static final String TABLE = DedupStore.TABLE + "_chain";

  /**
   * Records a place where the message has none; an existing row leaves it a no-op with update
   * count 0. Parameters: handler, message_id, replay_count, attempt, delivery_id, updated_at.
   */
  public static final String INSERT = "INSERT INTO " + TABLE
      + " (handler, message_id, replay_count, attempt, delivery_id, updated_at) VALUES (?, ?, ?, ?, ?, ?)"
      + " ON CONFLICT (handler, message_id) DO NOTHING";

  /**
   * {@link #INSERT} on MySQL and MariaDB: an existing row fails it with error 1062 (ON DUPLICATE
   * KEY UPDATE would count 1 under the drivers' default "found rows", as for an insert).
   */
  public static final String MYSQL_INSERT = "INSERT INTO " + TABLE
      + " (handler, message_id, replay_count, attempt, delivery_id, updated_at) VALUES (?, ?, ?, ?, ?, ?)";

  /**
   * Moves the row to a place that it does not supersede ({@link #superseded}'s complement, as a
   * condition on the row). Parameters: replay_count, attempt, delivery_id, updated_at, handler,
   * message_id, then replay_count, replay_count, attempt, attempt, delivery_id for the condition.
   */
  public static final String ADVANCE = "UPDATE " + TABLE
      + " SET replay_count = ?, attempt = ?, delivery_id = ?, updated_at = ?"
      + " WHERE handler = ? AND message_id = ? AND (replay_count < ? OR (replay_count = ? AND"
      + " (attempt < ? OR (attempt = ? AND delivery_id = ?))))";

  /** Reads a message's place. Parameters: handler, message_id. */
  public static final String LOOKUP =
      "SELECT replay_count, attempt, delivery_id FROM " + TABLE + " WHERE handler = ? AND message_id = ?";

  /**
   * Deletes the chains not advanced since a cutoff (UTC epoch milliseconds); run it with the
   * claims' retention, beside {@link DedupStore#DELETE_OLD}.
   */
  public static final String DELETE_OLD = "DELETE FROM " + TABLE + " WHERE updated_at < ?";

  private RetryChain() {}

  /**
   * What {@link #advance} found: the pair runtime-go's {@code Store.Advance} and Python's {@code
   * dedup.advance} return as (ok, went). It is not their {@code ChainStep}, advance's input (a
   * failed copy's handler, message id, place and time), which are advance's arguments here.
   *
   * @param ok true when the copy goes on to its retry or dead letter
   * @param went the place of the copy that went on: this one when ok, else the row's
   */
  public record Advance(boolean ok, ChainPos went) {}

  /**
   * Reports whether the copy at c must stop because the copy at went, the chain row's, went on:
   * a later replay, a later attempt of the same replay, or the same attempt under another
   * delivery id. It is the rule in one place; Go ({@code dedup.Superseded}), Java and Python
   * decide by it alike.
   *
   * @param went the row's place
   * @param c the copy's place
   * @return true when c is superseded
   */
  public static boolean superseded(ChainPos went, ChainPos c) {
    if (went.replayCount() != c.replayCount()) {
      return went.replayCount() > c.replayCount();
    }
    return went.attempt() > c.attempt()
        || (went.attempt() == c.attempt() && !went.deliveryId().equals(c.deliveryId()));
  }

  /**
   * Creates the chain table and its index (SQLite, PostgreSQL, MySQL, MariaDB) by the statements of contracts/sql
   * ({@link Ddl}); {@link DedupStore#migrate} calls it.
   */
  public static void migrate(Connection conn) throws SQLException {
    Ddl.migrate(conn, Ddl.dialect(conn), TABLE);
  }

  /**
   * Records that the copy at pos goes on to a retry or a dead letter, unless it is superseded.
   * Each statement commits on its own: conn must not be in a transaction (the business
   * transaction, which the failure rolled back, has ended); it is put in auto-commit mode for the
   * statements and then back. The row is so durable before the retry is published, and a crash in
   * between delivers the copy again, which advance lets go on again.
   *
   * @param conn a connection outside any transaction
   * @param handler the handler name
   * @param messageId the envelope's message_id
   * @param pos the failed copy's place
   * @param atMs now, UTC epoch milliseconds
   * @return whether the copy goes on, and the place of the copy that went on
   * @throws SQLException when the database failed: hand the delivery back
   */
  public static Advance advance(Connection conn, String handler, String messageId, ChainPos pos, long atMs)
      throws SQLException {
    return autoCommit(conn, "advance retry chain", () -> {
      if (insert(conn, handler, messageId, pos, atMs)) {
        return new Advance(true, pos);
      }
      try (PreparedStatement st = conn.prepareStatement(ADVANCE)) {
        st.setInt(1, pos.replayCount());
        st.setInt(2, pos.attempt());
        st.setString(3, pos.deliveryId());
        st.setLong(4, atMs);
        st.setString(5, handler);
        st.setString(6, messageId);
        st.setInt(7, pos.replayCount());
        st.setInt(8, pos.replayCount());
        st.setInt(9, pos.attempt());
        st.setInt(10, pos.attempt());
        st.setString(11, pos.deliveryId());
        if (st.executeUpdate() == 1) {
          return new Advance(true, pos);
        }
      }
      // No row changed: superseded, or (a driver that counts changed rows only) the row
      // already held exactly this place.
      ChainPos went = lookup(conn, handler, messageId);
      if (went == null) {
        throw new SQLException("the row was deleted meanwhile; is the claims' retention shorter than a retry chain?");
      }
      return new Advance(!superseded(went, pos), went);
    });
  }

  /**
   * Reads the place of the copy of (handler, messageId) that last went on, in a statement of its
   * own: conn must not be in a transaction (see {@link #advance}).
   *
   * @param conn a connection outside any transaction
   * @param handler the handler name
   * @param messageId the envelope's message_id
   * @return the place, or null when the message has no chain row
   * @throws SQLException when the database failed
   */
  public static ChainPos row(Connection conn, String handler, String messageId) throws SQLException {
    return autoCommit(conn, "read retry chain", () -> lookup(conn, handler, messageId));
  }

  private static boolean insert(Connection conn, String handler, String messageId, ChainPos pos, long atMs)
      throws SQLException {
    boolean mysql = DedupStore.isMySql(conn);
    try (PreparedStatement st = conn.prepareStatement(mysql ? MYSQL_INSERT : INSERT)) {
      st.setString(1, handler);
      st.setString(2, messageId);
      st.setInt(3, pos.replayCount());
      st.setInt(4, pos.attempt());
      st.setString(5, pos.deliveryId());
      st.setLong(6, atMs);
      return st.executeUpdate() == 1;
    } catch (SQLException e) {
      if (mysql && e.getErrorCode() == DedupStore.MYSQL_DUPLICATE_KEY) {
        return false;
      }
      throw e;
    }
  }

  private static ChainPos lookup(Connection conn, String handler, String messageId) throws SQLException {
    try (PreparedStatement st = conn.prepareStatement(LOOKUP)) {
      st.setString(1, handler);
      st.setString(2, messageId);
      try (ResultSet rs = st.executeQuery()) {
        if (!rs.next()) {
          return null;
        }
        return new ChainPos(rs.getInt(1), rs.getInt(2), rs.getString(3));
      }
    }
  }

  private interface Work<T> {
    T run() throws SQLException;
  }

  /**
   * Runs work with conn in auto-commit mode, then puts the mode back. A
   * failure is a SQLException whose message starts with step, as Go's do.
   */
  private static <T> T autoCommit(Connection conn, String step, Work<T> work) throws SQLException {
    try {
      boolean was = conn.getAutoCommit();
      if (!was) {
        conn.setAutoCommit(true);
      }
      T result;
      try {
        result = work.run();
      } catch (SQLException | RuntimeException e) {
        if (!was) {
          try {
            conn.setAutoCommit(false);
          } catch (SQLException s) {
            e.addSuppressed(s);
          }
        }
        throw e;
      }
      if (!was) {
        conn.setAutoCommit(false);
      }
      return result;
    } catch (SQLException e) {
      throw new SQLException("msgcontract: " + step + ": " + e.getMessage(), e.getSQLState(), e.getErrorCode(), e);
    }
  }
}
