package io.msgcontract.kafka;

import io.msgcontract.support.Ddl;
import io.msgcontract.v1.Envelope;
import java.sql.Connection;
import java.sql.SQLException;

/**
 * The producer's transactional outbox (core's {@link io.msgcontract.support.Outbox}, the same
 * tables as runtime-go's outbox package): {@link #write} stores an envelope in the caller's JDBC
 * transaction, so the message exists exactly when the business change commits; an
 * {@link OutboxRelay} publishes stored envelopes to Kafka afterwards. A Go relay and a Java relay
 * can serve one table.
 */
public final class Outbox {
  /** The outbox table's name. */
  public static final String TABLE = io.msgcontract.support.Outbox.TABLE;

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
    io.msgcontract.support.Outbox.migrate(conn, d == Dialect.POSTGRES ? Ddl.POSTGRES : Ddl.SQLITE);
  }

  /**
   * Stores env in the outbox within tx, the caller's transaction, which the caller commits with
   * its business change ({@link io.msgcontract.support.Outbox#write}).
   */
  public static void write(Connection tx, Envelope env) throws SQLException {
    io.msgcontract.support.Outbox.write(tx, env);
  }
}
