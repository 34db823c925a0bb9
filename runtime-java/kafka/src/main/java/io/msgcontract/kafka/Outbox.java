package io.msgcontract.kafka;

import io.msgcontract.observe.Tracing;
import io.msgcontract.support.Ddl;
import io.msgcontract.support.Envelopes;
import io.msgcontract.v1.Envelope;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;

/**
 * The producer's transactional outbox, the same tables as runtime-go's
 * outbox package: {@link #write} stores an envelope in the caller's JDBC
 * transaction, so the message exists exactly when the business change
 * commits; an {@link OutboxRelay} publishes stored envelopes afterwards. A Go
 * relay and a Java relay can serve one table.
 */
public final class Outbox {
  /** The outbox table's name. */
  public static final String TABLE = "msg_outbox";
  static final String LOCK_TABLE = "msg_outbox_lock";

  /** The SQL dialect of the business database. */
  public enum Dialect {
    /** SQLite. */
    SQLITE,
    /** PostgreSQL. */
    POSTGRES
  }

  private Outbox() {}

  /**
   * Creates the outbox tables if they do not exist, by the statements of contracts/sql ({@link Ddl}), and commits when
   * conn is not in auto-commit.
   */
  public static void migrate(Connection conn, Dialect d) throws SQLException {
    Ddl.migrate(conn, d == Dialect.POSTGRES ? Ddl.POSTGRES : Ddl.SQLITE, TABLE, LOCK_TABLE);
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
}
