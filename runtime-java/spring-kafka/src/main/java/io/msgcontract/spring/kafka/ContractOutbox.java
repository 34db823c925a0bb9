package io.msgcontract.spring.kafka;

import com.google.protobuf.Message;
import io.msgcontract.observe.Tracing;
import io.msgcontract.support.BizKeyException;
import io.msgcontract.support.Envelopes;
import io.msgcontract.support.EventSpec;
import io.msgcontract.support.Outbox;
import io.msgcontract.v1.Envelope;
import java.sql.Connection;
import java.sql.SQLException;
import javax.sql.DataSource;
import org.springframework.jdbc.datasource.DataSourceUtils;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * Publishes contract events through the transactional outbox: {@link #publish} writes the envelope
 * to {@code msg_outbox} in the caller's Spring transaction, on the same connection as its {@code
 * JdbcTemplate} or JPA writes, so the event exists exactly when the business change commits; the
 * relay ({@code msgcontract.relay.enabled=true}, or a Go or Java relay elsewhere) sends it. The
 * envelope carries the current span's trace context, when there is one, so that a consumer's
 * span, Go, Python or Java, continues the caller's trace.
 *
 * <pre>{@code
 * @Transactional
 * public void pay(String orderId) {
 *   jdbc.update("UPDATE orders SET state = 'PAID' WHERE id = ?", orderId);
 *   outbox.publish(PaymentContract.PaySuccess.SPEC, PaySuccess.newBuilder().setOrderId(orderId).build());
 * }
 * }</pre>
 */
public class ContractOutbox {
  private final DataSource dataSource;
  private final Runnable committed;

  /**
   * Returns an outbox on dataSource, whose transaction manager binds the caller's connection.
   *
   * @param dataSource the business database
   */
  public ContractOutbox(DataSource dataSource) {
    this(dataSource, null);
  }

  /**
   * Returns an outbox on dataSource that runs committed after each transaction that wrote to it
   * commits: the auto-configuration's wakes the application's relay ({@link
   * ContractOutboxRelay#notifyCommitted}). An application on PostgreSQL whose relay runs in another
   * process can declare its own ContractOutbox bean with an {@link
   * io.msgcontract.support.OutboxNotifier}'s {@code notifyCommitted} here (a bean of its own too,
   * closed with the context), so that relay wakes at once rather than after its interval.
   *
   * @param dataSource the business database
   * @param committed run after the commit of a transaction that wrote, or null
   */
  public ContractOutbox(DataSource dataSource, Runnable committed) {
    this.dataSource = dataSource;
    this.committed = committed;
  }

  /**
   * Writes message's envelope to the outbox in the current transaction.
   *
   * @param <M> the event message
   * @param spec the event's contract, for example {@code PaymentContract.PaySuccess.SPEC}
   * @param message the event
   * @return the envelope written (its message id is the event's)
   * @throws IllegalStateException when no Spring transaction is active
   * @throws IllegalArgumentException when the message's biz_key cannot be rendered
   * @throws SQLException when the database refuses the row
   */
  public <M extends Message> Envelope publish(EventSpec<M> spec, M message) throws SQLException {
    Envelope env;
    try {
      // Outbox.write stores the caller's span (OpenTelemetry's current one, which Micrometer
      // Tracing's OpenTelemetry bridge sets) in what it writes; injecting it here as well makes the
      // envelope returned the one written (Outbox.write then finds the trace set and keeps it).
      env = Tracing.inject(Envelopes.newEnvelope(spec, message, System.currentTimeMillis()));
    } catch (BizKeyException e) {
      throw new IllegalArgumentException("outbox: " + spec.eventType() + ": " + e.getMessage(), e);
    }
    write(env);
    return env;
  }

  /**
   * Writes message's envelope, its spec looked up from the message class ({@link
   * ContractSpecs#fromMessage}).
   *
   * @param <M> the event message
   * @param message the event
   * @return the envelope written
   * @throws SQLException when the database refuses the row
   */
  @SuppressWarnings("unchecked")
  public <M extends Message> Envelope publish(M message) throws SQLException {
    return publish((EventSpec<M>) ContractSpecs.fromMessage(message.getClass()), message);
  }

  /**
   * Writes env (built with {@code Envelopes.newEnvelope}) to the outbox in the current transaction.
   *
   * @param env the envelope
   * @throws IllegalStateException when no Spring transaction is active
   * @throws SQLException when the database refuses the row
   */
  public void write(Envelope env) throws SQLException {
    if (!TransactionSynchronizationManager.isActualTransactionActive()) {
      throw new IllegalStateException("ContractOutbox.publish needs an active Spring transaction, so the event "
          + "commits with the business write: call it from a @Transactional method (or in a TransactionTemplate)");
    }
    Connection c = DataSourceUtils.getConnection(dataSource);
    try {
      Outbox.write(c, env);
    } finally {
      DataSourceUtils.releaseConnection(c, dataSource);
    }
    if (committed != null && TransactionSynchronizationManager.isSynchronizationActive()) {
      TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {
        @Override
        public void afterCommit() {
          committed.run();
        }
      });
    }
  }
}
