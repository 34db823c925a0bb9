package io.msgcontract.support;

import io.msgcontract.observe.Tracing;
import io.msgcontract.v1.Envelope;
import io.opentelemetry.api.trace.Span;
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
 * Publishes the outbox's pending rows ({@link Outbox}) through a broker
 * module's {@link Publisher}, in id order, and marks each sent once the
 * publisher returned, as runtime-go's outbox.Relay does: one relay at a time
 * holds the leader lock (a lease in msg_outbox_lock), a row whose publish
 * failed holds back the later rows of its biz_key until the next pass, and
 * delivery is at least once (a relay that dies between publish and mark
 * publishes the row again; the consumers' dedup absorbs it). The Kafka and
 * RabbitMQ modules' relays are this one with their publisher.
 */
public final class OutboxRelay {
  /**
   * Sends one stored envelope to topic and returns once the broker has it
   * (Kafka: acknowledged; RabbitMQ: confirmed); a failure is an unchecked
   * exception, which {@link #flush} rethrows after the pass.
   */
  @FunctionalInterface
  public interface Publisher {
    /** Publishes envelope (its bytes) under bizKey to topic. */
    void publish(String topic, String bizKey, byte[] envelope);
  }

  private final ConnectionFactory db;
  private final Publisher publisher;
  private final String owner = UUID.randomUUID().toString();
  private final long leaseMs;
  private final int batchSize;
  private final Tracing tracing;

  /**
   * Returns a relay; with tracing (null for none) each row is published inside a producer span
   * ({@link Tracing#startPublish}), a child of the trace the row's envelope carries, injected in
   * its place, as runtime-go's relay does with a Tracer.
   *
   * @param db the business database holding the outbox
   * @param publisher where rows go
   * @param leaseMs how long the leader lock lasts without a pass (Go's default: 10 s)
   * @param batchSize rows per pass (Go's default: 100)
   * @param tracing the tracing, or null for none
   */
  public OutboxRelay(ConnectionFactory db, Publisher publisher, long leaseMs, int batchSize, Tracing tracing) {
    if (leaseMs <= 0 || batchSize <= 0) {
      throw new IllegalArgumentException("outbox: leaseMs and batchSize must be positive");
    }
    this.db = db;
    this.publisher = publisher;
    this.leaseMs = leaseMs;
    this.batchSize = batchSize;
    this.tracing = tracing;
  }

  /** A row's body to publish and its send span (null without tracing). */
  public record Traced(byte[] body, Span span) {}

  /**
   * Starts a row's send span and returns the body carrying it; the body unchanged and no span
   * without tracing or for a row that is no envelope.
   */
  public static Traced trace(Tracing tracing, String topic, byte[] body) {
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

  private record Row(long id, String topic, String key, byte[] body) {}

  /**
   * Makes one pass and returns how many rows it published; 0 when another
   * relay holds the lock.
   *
   * @throws SQLException when the database fails
   * @throws RuntimeException the publisher's first failure (the rows published before it are marked)
   */
  public int flush() throws SQLException {
    try (Connection c = db.open()) {
      c.setAutoCommit(true);
      if (!lead(c)) {
        return 0;
      }
      List<Row> batch = new ArrayList<>();
      try (PreparedStatement st = c.prepareStatement("SELECT id, topic, biz_key, envelope FROM " + Outbox.TABLE
          + " WHERE sent_at = 0 ORDER BY id LIMIT ?")) {
        st.setInt(1, batchSize);
        try (ResultSet rs = st.executeQuery()) {
          while (rs.next()) {
            batch.add(new Row(rs.getLong(1), rs.getString(2), rs.getString(3), rs.getBytes(4)));
          }
        }
      }
      Set<String> blocked = new HashSet<>();
      RuntimeException first = null;
      int sent = 0;
      for (Row r : batch) {
        if (blocked.contains(r.key())) {
          continue;
        }
        Traced t = trace(tracing, r.topic(), r.body());
        try {
          publisher.publish(r.topic(), r.key(), t.body());
        } catch (RuntimeException e) {
          if (t.span() != null) {
            Tracing.fail(t.span(), e);
          }
          blocked.add(r.key());
          first = first == null ? e : first;
          continue;
        } finally {
          if (t.span() != null) {
            t.span().end();
          }
        }
        try (PreparedStatement st = c.prepareStatement("UPDATE " + Outbox.TABLE + " SET sent_at = ? WHERE id = ?")) {
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

  private boolean lead(Connection c) throws SQLException {
    long now = System.currentTimeMillis();
    try (PreparedStatement st = c.prepareStatement("UPDATE " + Outbox.LOCK_TABLE
        + " SET owner = ?, lease_until = ? WHERE name = 'relay' AND (owner = ? OR lease_until < ?)")) {
      st.setString(1, owner);
      st.setLong(2, now + leaseMs);
      st.setString(3, owner);
      st.setLong(4, now);
      return st.executeUpdate() == 1;
    }
  }
}
