package io.msgcontract.support;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;

/**
 * Wakes the relays that LISTEN on a PostgreSQL database (every {@link OutboxRelay#run} on
 * PostgreSQL with pgjdbc does) from a producer in another process: call {@link #notifyCommitted}
 * after each commit that wrote to the outbox. In the relay's own process {@link
 * OutboxRelay#notifyCommitted} is enough and costs nothing. runtime-go's outbox.Notifier and
 * runtime-python's outbox.Notifier do the same.
 *
 * <p>It sends {@code SELECT pg_notify('msg_outbox', '')} outside the business transaction, from a
 * daemon thread of its own on a connection of its own (opened from the factory for each send and
 * closed after it: a pooling DataSource lends one), in autocommit, at most one at a time:
 * notifications asked for while one is on its way fold into one more. PostgreSQL serializes the
 * commits of transactions that NOTIFY (one database-wide lock from pre-commit to the end of the
 * commit), so a NOTIFY inside every business transaction (a trigger on the outbox) cuts durable
 * commits several-fold (pgbench, 16 clients: about 990 against 6,700 inserts a second); one
 * notifying transaction in flight per notifier does not hold back the business commits. A failed
 * NOTIFY is logged; the relays then see the row after their poll interval.
 */
public final class OutboxNotifier implements AutoCloseable {
  private static final System.Logger LOG = System.getLogger(OutboxNotifier.class.getName());
  /** How long one NOTIFY may take, in seconds (Go's Notifier: 10 s). */
  static final int TIMEOUT_S = 10;

  private final ConnectionFactory db;
  private final Object lock = new Object();
  private final Thread thread;
  /** A NOTIFY is asked for and not yet begun; guarded by lock. */
  private boolean pending;
  /** close() was called; guarded by lock. */
  private boolean closed;

  /**
   * Returns a notifier on db, the PostgreSQL database holding the outbox, and starts its thread.
   *
   * @param db opens the connections the NOTIFYs are sent on
   */
  public OutboxNotifier(ConnectionFactory db) {
    this.db = db;
    this.thread = new Thread(this::loop, "msgcontract-outbox-notify");
    this.thread.setDaemon(true);
    this.thread.start();
  }

  /**
   * Asks for one NOTIFY on the outbox's channel, sent by the notifier's thread; it never blocks.
   * Call it after the commit, never before: a relay woken before the commit does not see the row.
   * Calls after {@link #close} do nothing.
   */
  public void notifyCommitted() {
    synchronized (lock) {
      if (closed) {
        return;
      }
      pending = true;
      lock.notifyAll();
    }
  }

  private void loop() {
    while (true) {
      synchronized (lock) {
        while (!pending && !closed) {
          try {
            lock.wait();
          } catch (InterruptedException e) {
            return;
          }
        }
        if (!pending) {
          return;
        }
        pending = false;
      }
      send();
    }
  }

  private void send() {
    try (Connection c = db.open()) {
      if (!c.getAutoCommit()) {
        c.setAutoCommit(true);
      }
      try (PreparedStatement st = c.prepareStatement("SELECT pg_notify(?, '')")) {
        st.setQueryTimeout(TIMEOUT_S);
        st.setString(1, Outbox.TABLE);
        st.execute();
      }
    } catch (SQLException | RuntimeException e) {
      LOG.log(System.Logger.Level.WARNING,
          "msgcontract: outbox NOTIFY failed; relays see the rows after their poll interval: " + e, e);
    }
  }

  /**
   * Sends the NOTIFY still asked for, if any, then ends the thread and waits for it; later
   * {@link #notifyCommitted} calls do nothing.
   */
  @Override
  public void close() {
    synchronized (lock) {
      closed = true;
      lock.notifyAll();
    }
    OutboxListener.join(thread);
  }
}
