package io.msgcontract.support;

import io.msgcontract.observe.Tracing;
import io.msgcontract.v1.Envelope;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

/**
 * The producer's transactional outbox, the same tables as runtime-go's
 * outbox package (msg_outbox and its relays' lock msg_outbox_lock, by the
 * statements of contracts/sql): {@link #write} stores an envelope in the
 * caller's JDBC transaction, so the message exists exactly when the business
 * change commits, and an {@link OutboxRelay} publishes stored envelopes
 * afterwards through whichever broker module. Go and Java relays can serve
 * one table.
 */
public final class Outbox {
  /** The outbox table's name. */
  public static final String TABLE = "msg_outbox";
  /** The relays' leader lock table. */
  public static final String LOCK_TABLE = "msg_outbox_lock";

  private Outbox() {}

  /**
   * Creates the outbox tables if they do not exist ({@link Ddl}; dialect
   * {@link Ddl#SQLITE}, {@link Ddl#POSTGRES} or {@link Ddl#MYSQL}), and
   * commits when conn is not in auto-commit.
   */
  public static void migrate(Connection conn, String dialect) throws SQLException {
    Ddl.migrate(conn, dialect, TABLE, LOCK_TABLE);
    if (!conn.getAutoCommit()) {
      conn.commit();
    }
  }

  /**
   * Stores env in the outbox within tx, the caller's transaction, which the
   * caller commits with its business change. env.topic is where the relay
   * publishes it. An envelope without a trace context gets the current
   * OpenTelemetry span's ({@link Tracing#inject(Envelope)}; nothing without
   * one), so consumers continue the producer's trace.
   */
  public static void write(Connection tx, Envelope env) throws SQLException {
    if (env.getTopic().isEmpty()) {
      throw new IllegalArgumentException("outbox: envelope " + env.getMessageId()
          + " has no topic; build it with Envelopes.newEnvelope");
    }
    env = Tracing.inject(env);
    try (PreparedStatement st = tx.prepareStatement("INSERT INTO " + TABLE
        + " (topic, biz_key, message_id, envelope, created_at) VALUES (?, ?, ?, ?, ?)")) {
      st.setString(1, env.getTopic());
      st.setString(2, env.getBizKey());
      st.setString(3, env.getMessageId());
      st.setBytes(4, Envelopes.encode(env));
      st.setLong(5, System.currentTimeMillis());
      st.executeUpdate();
    }
  }

  /** Counts rows not yet sent. */
  public static int pending(Connection c) throws SQLException {
    try (PreparedStatement st = c.prepareStatement("SELECT count(*) FROM " + TABLE + " WHERE sent_at = 0");
        ResultSet rs = st.executeQuery()) {
      rs.next();
      return rs.getInt(1);
    }
  }
}
