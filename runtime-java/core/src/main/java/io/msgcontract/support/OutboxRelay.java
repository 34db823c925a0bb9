package io.msgcontract.support;

import io.msgcontract.observe.Tracing;
import io.msgcontract.v1.Envelope;
import io.opentelemetry.api.trace.Span;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.IntConsumer;

/**
 * Publishes the outbox's pending rows ({@link Outbox}) through a broker
 * module's {@link Publisher}, in id order, and marks the pass's published rows
 * sent in one statement once the publisher returned, as runtime-go's
 * outbox.Relay does: one relay at a time holds the leader lock (a lease in
 * msg_outbox_lock), a row whose publish failed holds back the later rows of
 * its biz_key until the next pass, and delivery is at least once (a relay that
 * dies between publish and mark publishes the row again; the consumers' dedup
 * absorbs it). The Kafka and RabbitMQ modules' relays are this one with their
 * publisher.
 *
 * <p>{@link #run} passes until its thread is interrupted and wakes on commit:
 * {@link #notifyCommitted} (a producer in this process committed; Go's
 * Relay.Notify, Python's Relay.notify) and, on PostgreSQL, a NOTIFY that a
 * producer in another process sent after its commit through an {@link
 * OutboxNotifier}, which a connection of its own LISTENs for, end its wait at
 * once; its poll interval
 * only bounds how late a row is seen without a signal (MySQL and MariaDB, and
 * SQLite written by another process, are polled).
 */
public final class OutboxRelay {
  private static final System.Logger LOG = System.getLogger(OutboxRelay.class.getName());

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
  /** One pending {@link #notifyCommitted}, as Go's channel of capacity 1. */
  private final BlockingQueue<Boolean> wake = new ArrayBlockingQueue<>(1);

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
      List<Long> sent = new ArrayList<>();
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
        sent.add(r.id());
      }
      markSent(c, sent);
      if (first != null) {
        throw first;
      }
      return sent.size();
    }
  }

  /** How many ids one UPDATE of {@link #markSent} binds at most (Go's markChunk). */
  static final int MARK_CHUNK = 500;

  /**
   * Marks rows sent in one autocommitted UPDATE per {@link #MARK_CHUNK} ids: one commit (one fsync
   * on a durable database) per pass, not per row. Rows published but not marked (the relay died in
   * between) are published again by the next pass: consumers deduplicate them.
   */
  private static void markSent(Connection c, List<Long> ids) throws SQLException {
    long now = System.currentTimeMillis();
    for (int from = 0; from < ids.size(); from += MARK_CHUNK) {
      List<Long> chunk = ids.subList(from, Math.min(ids.size(), from + MARK_CHUNK));
      try (PreparedStatement st = c.prepareStatement("UPDATE " + Outbox.TABLE + " SET sent_at = ? WHERE id IN ("
          + String.join(", ", Collections.nCopies(chunk.size(), "?")) + ")")) {
        st.setLong(1, now);
        for (int i = 0; i < chunk.size(); i++) {
          st.setLong(i + 2, chunk.get(i));
        }
        st.executeUpdate();
      }
    }
  }

  /**
   * Tells the relay that a transaction which wrote to the outbox has committed, so that a waiting
   * {@link #run} makes its next pass now instead of after its poll interval: runtime-go's
   * Relay.Notify and runtime-python's Relay.notify ({@code Object.notify} is taken). Call it after
   * the commit, never before: a pass that runs before the commit does not see the row. It never
   * blocks; calls that arrive during a pass fold into one more pass.
   */
  public void notifyCommitted() {
    wake.offer(Boolean.TRUE);
  }

  /**
   * Passes until the calling thread is interrupted, then throws InterruptedException: a pass at
   * once after a full batch, else a wait of up to pollIntervalMs that {@link #notifyCommitted}
   * and, on PostgreSQL, an {@link OutboxNotifier}'s NOTIFY from another process ({@link
   * OutboxListener}) end at once. A failed pass is logged and waits out the same interval.
   *
   * @param pollIntervalMs the longest wait after a pass that had less than a batch to do (Go's
   *     default: 100 ms); also the pause before a failed LISTEN connection is opened again
   * @throws InterruptedException when the thread is interrupted, the relay's way to stop
   */
  public void run(long pollIntervalMs) throws InterruptedException {
    run(pollIntervalMs, n -> {});
  }

  /**
   * {@link #run(long)}, telling passes how many rows each pass published (0 for a failed one).
   *
   * @param pollIntervalMs the longest wait after a pass that had less than a batch to do
   * @param passes called after each pass with the count it published
   * @throws InterruptedException when the thread is interrupted, the relay's way to stop
   */
  public void run(long pollIntervalMs, IntConsumer passes) throws InterruptedException {
    if (pollIntervalMs <= 0) {
      throw new IllegalArgumentException("outbox: pollIntervalMs must be positive");
    }
    OutboxListener listener = OutboxListener.start(db, this::notifyCommitted, pollIntervalMs);
    try {
      while (true) {
        int n = 0;
        boolean failed = false;
        try {
          n = flush();
        } catch (SQLException | RuntimeException e) {
          if (Thread.currentThread().isInterrupted()) {
            throw new InterruptedException("outbox: relay interrupted in a pass");
          }
          failed = true;
          LOG.log(System.Logger.Level.WARNING, "msgcontract: outbox relay pass failed (retried in " + pollIntervalMs
              + " ms): " + e, e);
        }
        passes.accept(n);
        if (Thread.interrupted()) {
          throw new InterruptedException("outbox: relay interrupted");
        }
        if (n < batchSize || failed) {
          wake.poll(pollIntervalMs, TimeUnit.MILLISECONDS);
        }
      }
    } finally {
      listener.close();
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
