package io.msgcontract.support;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * The dedup claim table shared with the Go runtime: one row per
 * (biz_key, handler), inserted in the handler's own transaction, so the
 * claim commits exactly when the handler's effects commit and rolls back
 * with them. The table and key are the same in every language, so Go,
 * Java and Python consumers of one database deduplicate together.
 */
public final class DedupSql {
  /** The claim table's default name. */
  public static final String TABLE = "msg_dedup";

  /** Creates the claim table if it does not exist (SQLite and PostgreSQL). */
  public static final String CREATE_TABLE = "CREATE TABLE IF NOT EXISTS " + TABLE + " ("
      + "biz_key TEXT NOT NULL, handler TEXT NOT NULL, message_id TEXT NOT NULL, "
      + "payload_hash TEXT NOT NULL, created_at BIGINT NOT NULL, "
      + "PRIMARY KEY (biz_key, handler))";

  /** Creates the index that retention cleanup uses. */
  public static final String CREATE_INDEX =
      "CREATE INDEX IF NOT EXISTS " + TABLE + "_created_at ON " + TABLE + " (created_at)";

  /**
   * Claims (biz_key, handler). An existing row leaves the statement a no-op
   * with update count 0: a duplicate. ON CONFLICT keeps a PostgreSQL
   * transaction usable after the conflict, where a failed INSERT would abort it.
   */
  public static final String INSERT = "INSERT INTO " + TABLE
      + " (biz_key, handler, message_id, payload_hash, created_at) VALUES (?, ?, ?, ?, ?)"
      + " ON CONFLICT (biz_key, handler) DO NOTHING";

  /**
   * Creates the claim table on MySQL and MariaDB (InnoDB), as the Go runtime
   * does: keys as VARBINARY (compared as bytes, within InnoDB's 3072-byte key
   * limit), the index inline because MySQL has no CREATE INDEX IF NOT EXISTS.
   */
  public static final String MYSQL_CREATE_TABLE = "CREATE TABLE IF NOT EXISTS " + TABLE + " ("
      + "biz_key VARBINARY(1024) NOT NULL, handler VARBINARY(255) NOT NULL, message_id TEXT NOT NULL, "
      + "payload_hash TEXT NOT NULL, created_at BIGINT NOT NULL, "
      + "PRIMARY KEY (biz_key, handler), INDEX " + TABLE + "_created_at (created_at))";

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

  private DedupSql() {}

  /** Reports whether conn is a MySQL or MariaDB connection. */
  public static boolean isMySql(Connection conn) throws SQLException {
    String product = conn.getMetaData().getDatabaseProductName().toLowerCase(java.util.Locale.ROOT);
    return product.contains("mysql") || product.contains("mariadb");
  }

  /**
   * Creates the claim table and its index, and the retry chain table ({@link RetryChain#migrate})
   * (SQLite, PostgreSQL, MySQL, MariaDB).
   */
  public static void migrate(Connection conn) throws SQLException {
    try (Statement st = conn.createStatement()) {
      if (isMySql(conn)) {
        st.execute(MYSQL_CREATE_TABLE);
      } else {
        st.execute(CREATE_TABLE);
        st.execute(CREATE_INDEX);
      }
    }
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
