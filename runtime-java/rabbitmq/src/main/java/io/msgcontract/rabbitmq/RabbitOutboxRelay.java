package io.msgcontract.rabbitmq;

import io.msgcontract.observe.Tracing;
import io.msgcontract.support.Outbox;
import io.msgcontract.support.OutboxRelay;
import io.msgcontract.v1.Envelope;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.function.IntConsumer;

/**
 * Publishes the outbox's pending rows (core's {@link Outbox}: the tables of runtime-go's outbox
 * package, msg_outbox and msg_outbox_lock) through a {@link RabbitPublisher}, each confirmed by the
 * broker before it is marked sent: core's {@link OutboxRelay} (in id order, one relay at a time
 * under the leader lock, a row whose publish failed, no confirm or the broker blocking publishers,
 * holding back the later rows of its biz_key until the next pass, at least once), as runtime-go's
 * outbox.Relay and runtime-java/kafka's OutboxRelay do.
 */
public final class RabbitOutboxRelay {
  /** The outbox table. */
  public static final String TABLE = Outbox.TABLE;

  private final OutboxRelay relay;

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
   * Returns a relay that publishes each row inside a producer span {@code send <topic>}
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
    this.relay = new OutboxRelay(db, (topic, key, body) -> publisher.publish(topic, body), leaseMs, batchSize, tracing);
  }

  /**
   * Makes one pass and returns how many rows it published; 0 when another
   * relay holds the lock.
   *
   * @throws SQLException when the database fails
   * @throws RabbitRuntimeException when a publish was not confirmed (the rows confirmed before it are marked)
   */
  public int flush() throws SQLException {
    return relay.flush();
  }

  /**
   * Wakes a waiting {@link #run} at once: call it after committing a transaction that wrote to the
   * outbox ({@link OutboxRelay#notifyCommitted}; Go's Relay.Notify).
   */
  public void notifyCommitted() {
    relay.notifyCommitted();
  }

  /**
   * Passes until the calling thread is interrupted ({@link OutboxRelay#run(long,
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

  /**
   * Creates the outbox tables if they do not exist ({@link Outbox#migrate}; dialect
   * {@code Ddl.SQLITE}, {@code Ddl.POSTGRES} or {@code Ddl.MYSQL}), and commits when conn is not in
   * auto-commit.
   */
  public static void migrate(Connection conn, String dialect) throws SQLException {
    Outbox.migrate(conn, dialect);
  }

  /**
   * Stores env in the outbox within tx, the caller's transaction, which the caller commits with
   * its business change ({@link Outbox#write}: the same row runtime-java/kafka's and runtime-go's
   * outbox write). env.topic is where the relay publishes it.
   */
  public static void write(Connection tx, Envelope env) throws SQLException {
    Outbox.write(tx, env);
  }

  /** Counts rows not yet sent. */
  public static int pending(Connection c) throws SQLException {
    return Outbox.pending(c);
  }
}
