package io.msgcontract.support;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;

/**
 * The dedup claim table shared with the Go runtime: one row per
 * (biz_key, handler), inserted in the handler's own transaction, so the
 * claim commits exactly when the handler's effects commit and rolls back
 * with them. The table and key are the same in every language, so Go,
 * Java and Python consumers of one database deduplicate together. It is the
 * dedup store of runtime-go's {@code dedup.Store} and Python's {@code dedup}
 * module: the claim's statements, {@link #migrate} and {@link #claim};
 * {@link Consumer} claims through it.
 */
public final class DedupStore {
  /** The claim table's default name. */
  public static final String TABLE = "msg_dedup";

  /**
   * Claims (biz_key, handler). An existing row leaves the statement a no-op
   * with update count 0: a duplicate. ON CONFLICT keeps a PostgreSQL
   * transaction usable after the conflict, where a failed INSERT would abort it.
   */
  public static final String INSERT = "INSERT INTO " + TABLE
      + " (biz_key, handler, message_id, payload_hash, created_at) VALUES (?, ?, ?, ?, ?)"
      + " ON CONFLICT (biz_key, handler) DO NOTHING";

  /**
   * Claims (biz_key, handler) on MySQL and MariaDB. A duplicate fails with
   * error 1062, which rolls back this statement only (the transaction goes
   * on). Neither ON DUPLICATE KEY UPDATE (its update count is 1 for a
   * duplicate under the drivers' default "found rows") nor INSERT IGNORE
   * (which would truncate a too-long key instead of failing) can tell.
   */
  public static final String MYSQL_INSERT = "INSERT INTO " + TABLE
      + " (biz_key, handler, message_id, payload_hash, created_at) VALUES (?, ?, ?, ?, ?)";

  /** MySQL's duplicate-key error code (ER_DUP_ENTRY). */
  static final int MYSQL_DUPLICATE_KEY = 1062;

  /**
   * Deletes claims created before a cutoff (UTC epoch milliseconds). Run {@link
   * RetryChain#DELETE_OLD} with the same cutoff: the chains share the claims' retention.
   */
  public static final String DELETE_OLD = "DELETE FROM " + TABLE + " WHERE created_at < ?";

  private DedupStore() {}

  /** Reports whether conn is a MySQL or MariaDB connection. */
  public static boolean isMySql(Connection conn) throws SQLException {
    String product = conn.getMetaData().getDatabaseProductName().toLowerCase(java.util.Locale.ROOT);
    return product.contains("mysql") || product.contains("mariadb");
  }

  /**
   * Creates the claim table and its index, and the retry chain table ({@link RetryChain#migrate})
   * (SQLite, PostgreSQL, MySQL, MariaDB), by the statements of contracts/sql ({@link Ddl}).
   */
  public static void migrate(Connection conn) throws SQLException {
    Ddl.migrate(conn, Ddl.dialect(conn), TABLE);
    RetryChain.migrate(conn);
  }

  /**
   * Inserts the claim in conn's current transaction and reports whether this
   * transaction now holds it; false means another delivery committed it: a
   * duplicate.
   */
  public static boolean claim(Connection conn, String bizKey, String handler, String messageId,
      String payloadHash, long createdAtMs) throws SQLException {
    boolean mysql = isMySql(conn);
    try (PreparedStatement st = conn.prepareStatement(mysql ? MYSQL_INSERT : INSERT)) {
      st.setString(1, bizKey);
      st.setString(2, handler);
      st.setString(3, messageId);
      st.setString(4, payloadHash);
      st.setLong(5, createdAtMs);
      return st.executeUpdate() == 1;
    } catch (SQLException e) {
      if (mysql && e.getErrorCode() == MYSQL_DUPLICATE_KEY) {
        return false;
      }
      throw e;
    }
  }
}
