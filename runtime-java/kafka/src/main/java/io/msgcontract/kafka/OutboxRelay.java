package io.msgcontract.kafka;

import io.msgcontract.observe.Tracing;
import io.msgcontract.support.Outbox;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.function.IntConsumer;

/**
 * Publishes the outbox's pending rows through a {@link KafkaPublisher}: core's
 * {@link io.msgcontract.support.OutboxRelay} (in id order, one relay at a time under the leader
 * lock, a failed row holding back the later rows of its biz_key, at least once), as runtime-go's
 * outbox.Relay does.
 */
public final class OutboxRelay {
  private final io.msgcontract.support.OutboxRelay relay;

  /**
   * Returns a relay.
   *
   * @param db the business database holding the outbox
   * @param publisher where rows go; its namespace applies
   * @param leaseMs how long the leader lock lasts without a pass (Go's default: 10 s)
   * @param batchSize rows per pass (Go's default: 100)
   */
  public OutboxRelay(ConnectionFactory db, KafkaPublisher publisher, long leaseMs, int batchSize) {
    this(db, publisher, leaseMs, batchSize, null);
  }

  /**
   * Returns a relay that publishes each row inside a producer span {@code send <topic>}
   * ({@link Tracing#startPublish}), a child of the trace the row's envelope carries, injected in
   * its place, as runtime-go's relay does with a Tracer.
   *
   * @param db the business database holding the outbox
   * @param publisher where rows go; its namespace applies
   * @param leaseMs how long the leader lock lasts without a pass (Go's default: 10 s)
   * @param batchSize rows per pass (Go's default: 100)
   * @param tracing the tracing, or null for none
   */
  public OutboxRelay(ConnectionFactory db, KafkaPublisher publisher, long leaseMs, int batchSize, Tracing tracing) {
    this.relay = new io.msgcontract.support.OutboxRelay(db, publisher::publish, leaseMs, batchSize, tracing);
  }

  /**
   * Makes one pass and returns how many rows it published; 0 when another
   * relay holds the lock.
   *
   * @throws SQLException when the database fails
   * @throws KafkaRuntimeException when a publish failed (the rows published before it are marked)
   */
  public int flush() throws SQLException {
    return relay.flush();
  }

  /**
   * Wakes a waiting {@link #run} at once: call it after committing a transaction that wrote to the
   * outbox ({@link io.msgcontract.support.OutboxRelay#notifyCommitted}; Go's Relay.Notify).
   */
  public void notifyCommitted() {
    relay.notifyCommitted();
  }

  /**
   * Passes until the calling thread is interrupted ({@link io.msgcontract.support.OutboxRelay#run(long,
   * IntConsumer)}): at once after a full batch, else after up to pollIntervalMs, which {@link
   * #notifyCommitted} and, on PostgreSQL, the NOTIFY of an {@link io.msgcontract.support.OutboxNotifier}
   * that a producer in another process sends after its commit end at once.
   *
   * @param pollIntervalMs the longest wait after a pass that had less than a batch to do
   * @param passes called after each pass with the count it published
   * @throws InterruptedException when the thread is interrupted, the relay's way to stop
   */
  public void run(long pollIntervalMs, IntConsumer passes) throws InterruptedException {
    relay.run(pollIntervalMs, passes);
  }

  /** Counts rows not yet sent. */
  public static int pending(Connection c) throws SQLException {
    return Outbox.pending(c);
  }
}
