package io.msgcontract.rabbitmq;

import io.msgcontract.observe.Tracing;
import io.msgcontract.support.DecodeException;
import io.msgcontract.support.Envelopes;
import io.msgcontract.v1.Envelope;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.StatusCode;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;

/**
 * Publishes the outbox's pending rows (the tables of runtime-go's outbox
 * package and of runtime-java/kafka's {@code Outbox}: msg_outbox and
 * msg_outbox_lock, created by {@code io.msgcontract.support.Ddl}) through a
 * {@link RabbitPublisher}, in id order, each confirmed by the broker before it
 * is marked sent, as runtime-go's outbox.Relay and runtime-java/kafka's
 * OutboxRelay do: one relay at a time holds the leader lock (a lease in
 * msg_outbox_lock), a row whose publish failed (no confirm, or the broker
 * blocks publishers) holds back the later rows of its biz_key until the next
 * pass, and delivery is at least once (a relay that dies between publish and
 * mark publishes the row again; the consumers' dedup absorbs it).
 */
public final class RabbitOutboxRelay {
  /** The outbox table. */
  public static final String TABLE = "msg_outbox";
  static final String LOCK_TABLE = "msg_outbox_lock";

  private final ConnectionFactory db;
  private final RabbitPublisher publisher;
  private final String owner = UUID.randomUUID().toString();
  private final long leaseMs;
  private final int batchSize;
  private final Tracing tracing;

  /**
   * Returns a relay.
   *
   * @param db the business database holding the outbox
   * @param publisher where rows go (its prefix applies)
   * @param leaseMs how long the leader lock lasts without a pass (Go's default: 10 s)
   * @param batchSize rows per pass (Go's default: 100)
   */
  public RabbitOutboxRelay(ConnectionFactory db, RabbitPublisher publisher, long leaseMs, int batchSize) {
    this(db, publisher, leaseMs, batchSize, null);
  }

  /**
   * Returns a relay that publishes each row inside a producer span {@code publish <topic>}
   * ({@link Tracing#startPublish}), a child of the trace the row's envelope carries.
   *
   * @param db the business database holding the outbox
   * @param publisher where rows go (its prefix applies)
   * @param leaseMs how long the leader lock lasts without a pass (Go's default: 10 s)
   * @param batchSize rows per pass (Go's default: 100)
   * @param tracing the tracing, or null for none
   */
  public RabbitOutboxRelay(ConnectionFactory db, RabbitPublisher publisher, long leaseMs, int batchSize,
      Tracing tracing) {
    if (leaseMs <= 0 || batchSize <= 0) {
      throw new IllegalArgumentException("outbox: leaseMs and batchSize must be positive");
    }
    this.db = db;
    this.publisher = publisher;
    this.leaseMs = leaseMs;
    this.batchSize = batchSize;
    this.tracing = tracing;
  }

  private record Row(long id, String topic, String key, byte[] body) {}

  private record Traced(byte[] body, Span span) {}

  private Traced trace(String topic, byte[] body) {
    if (tracing == null) {
      return new Traced(body, null);
    }
    Envelope.Builder b;
    try {
      b = Envelopes.decode(body).toBuilder();
    } catch (DecodeException e) {
      return new Traced(body, null);
    }
    Span span = tracing.startPublish(topic, b);
    return new Traced(Envelopes.encode(b.build()), span);
  }

  /**
   * Makes one pass and returns how many rows it published; 0 when another
   * relay holds the lock.
   *
   * @throws SQLException when the database fails
   * @throws RabbitRuntimeException when a publish was not confirmed (the rows confirmed before it are marked)
   */
  public int flush() throws SQLException {
    try (Connection c = db.open()) {
      c.setAutoCommit(true);
      if (!lead(c)) {
        return 0;
      }
      List<Row> batch = new ArrayList<>();
      try (PreparedStatement st = c.prepareStatement("SELECT id, topic, biz_key, envelope FROM " + TABLE
          + " WHERE sent_at = 0 ORDER BY id LIMIT ?")) {
        st.setInt(1, batchSize);
        try (ResultSet rs = st.executeQuery()) {
          while (rs.next()) {
            batch.add(new Row(rs.getLong(1), rs.getString(2), rs.getString(3), rs.getBytes(4)));
          }
        }
      }
      Set<String> blocked = new HashSet<>();
      RabbitRuntimeException first = null;
      int sent = 0;
      for (Row r : batch) {
        if (blocked.contains(r.key())) {
          continue;
        }
        Traced t = trace(r.topic(), r.body());
        try {
          publisher.publish(r.topic(), t.body());
        } catch (RabbitRuntimeException e) {
          if (t.span() != null) {
            t.span().recordException(e);
            t.span().setStatus(StatusCode.ERROR, String.valueOf(e.getMessage()));
          }
          blocked.add(r.key());
          first = first == null ? e : first;
          continue;
        } finally {
          if (t.span() != null) {
            t.span().end();
          }
        }
        try (PreparedStatement st = c.prepareStatement("UPDATE " + TABLE + " SET sent_at = ? WHERE id = ?")) {
          st.setLong(1, System.currentTimeMillis());
          st.setLong(2, r.id());
          st.executeUpdate();
        }
        sent++;
      }
      if (first != null) {
        throw first;
      }
      return sent;
    }
  }

  /**
   * Creates the outbox tables if they do not exist, by the statements of
   * contracts/sql ({@code io.msgcontract.support.Ddl}; dialect {@code Ddl.SQLITE},
   * {@code Ddl.POSTGRES} or {@code Ddl.MYSQL}), and commits when conn is not in auto-commit.
   */
  public static void migrate(Connection conn, String dialect) throws SQLException {
    io.msgcontract.support.Ddl.migrate(conn, dialect, TABLE, LOCK_TABLE);
    if (!conn.getAutoCommit()) {
      conn.commit();
    }
  }

  /**
   * Stores env in the outbox within tx, the caller's transaction, which the
   * caller commits with its business change (the same row runtime-java/kafka's
   * {@code Outbox.write} and runtime-go's outbox write). env.topic is where the
   * relay publishes it. An envelope without a trace context gets the current
   * OpenTelemetry span's.
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

  private boolean lead(Connection c) throws SQLException {
    long now = System.currentTimeMillis();
    try (PreparedStatement st = c.prepareStatement("UPDATE " + LOCK_TABLE
        + " SET owner = ?, lease_until = ? WHERE name = 'relay' AND (owner = ? OR lease_until < ?)")) {
      st.setString(1, owner);
      st.setLong(2, now + leaseMs);
      st.setString(3, owner);
      st.setLong(4, now);
      return st.executeUpdate() == 1;
    }
  }
}
