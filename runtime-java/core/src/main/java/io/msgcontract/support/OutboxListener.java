package io.msgcontract.support;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * On PostgreSQL, a thread of {@link OutboxRelay#run} that holds one connection of its own with
 * {@code LISTEN msg_outbox} (the channel is named like the table) and wakes the relay for each
 * notification: producers in other processes send one after their commits through an {@link
 * OutboxNotifier} (Go's outbox.Notifier, Python's outbox.Notifier), so any of them wakes the relay.
 * runtime-go's outbox/listen.go does the same. When the
 * connection fails it is opened again after the poll interval; meanwhile the relay polls. On
 * another database, or with a PostgreSQL driver that is not pgjdbc's (org.postgresql, reached by
 * reflection so that the runtime needs no driver of its own), the thread ends at once and the relay
 * polls.
 */
final class OutboxListener implements AutoCloseable {
  private static final System.Logger LOG = System.getLogger(OutboxListener.class.getName());
  /** How long one wait for notifications lasts, so that close() is seen within it. */
  static final int WAIT_MS = 250;

  private final ConnectionFactory db;
  private final Runnable wake;
  private final long retryMs;
  private final Thread thread;
  private volatile boolean closed;

  private OutboxListener(ConnectionFactory db, Runnable wake, long retryMs) {
    this.db = db;
    this.wake = wake;
    this.retryMs = retryMs;
    this.thread = new Thread(this::loop, "msgcontract-outbox-listen");
    this.thread.setDaemon(true);
  }

  /** Starts the thread; it opens its connection from db and calls wake for each notification. */
  static OutboxListener start(ConnectionFactory db, Runnable wake, long retryMs) {
    OutboxListener l = new OutboxListener(db, wake, retryMs);
    l.thread.start();
    return l;
  }

  private void loop() {
    while (!closed) {
      String why;
      try {
        why = listenOnce();
      } catch (SQLException | ReflectiveOperationException | RuntimeException e) {
        if (closed) {
          return;
        }
        LOG.log(System.Logger.Level.WARNING, "msgcontract: outbox relay LISTEN failed; polling every " + retryMs
            + " ms until it is back: " + e, e);
        try {
          Thread.sleep(retryMs);
        } catch (InterruptedException ie) {
          return;
        }
        continue;
      }
      if (why != null) {
        LOG.log(System.Logger.Level.DEBUG, "msgcontract: outbox relay polls: no LISTEN (" + why + ")");
      }
      return;
    }
  }

  /**
   * LISTENs on a new connection until close() or a failure; returns why it did not LISTEN (not
   * PostgreSQL, not pgjdbc), or null once closed.
   */
  private String listenOnce() throws SQLException, ReflectiveOperationException {
    try (Connection c = db.open()) {
      if (!Ddl.POSTGRES.equals(Ddl.dialect(c))) {
        return "not PostgreSQL";
      }
      Class<?> pg;
      try {
        pg = Class.forName("org.postgresql.PGConnection", true, c.getClass().getClassLoader());
      } catch (ClassNotFoundException e) {
        return "the driver is not pgjdbc (org.postgresql)";
      }
      if (!c.isWrapperFor(pg)) {
        return "the driver is not pgjdbc (org.postgresql)";
      }
      Object pc = c.unwrap(pg);
      Method notifications = pg.getMethod("getNotifications", int.class);
      c.setAutoCommit(true);
      try (Statement st = c.createStatement()) {
        st.execute("LISTEN " + Outbox.TABLE);
      }
      // A commit between the relay's last pass and LISTEN would go unnoticed: one pass covers it.
      wake.run();
      try {
        await(pc, notifications);
      } finally {
        if (closed) {
          // A pool's connection goes back to it with no LISTEN left behind (a failed one is gone).
          try (Statement st = c.createStatement()) {
            st.execute("UNLISTEN *");
          }
        }
      }
      return null;
    }
  }

  /** Wakes the relay for each notification on pc until close(). */
  private void await(Object pc, Method notifications) throws SQLException, ReflectiveOperationException {
    while (!closed) {
      Object[] got;
      try {
        got = (Object[]) notifications.invoke(pc, WAIT_MS);
      } catch (InvocationTargetException e) {
        if (e.getCause() instanceof SQLException s) {
          throw s;
        }
        throw e;
      }
      if (got != null && got.length > 0) {
        wake.run();
      }
    }
  }

  /** Ends the thread (within {@link #WAIT_MS}) and waits for it; the connection is closed, never pooled. */
  @Override
  public void close() {
    closed = true;
    thread.interrupt();
    join(thread);
  }

  /** Waits for t to end; an interrupt meanwhile is kept for the caller, not lost (OutboxNotifier shares it). */
  static void join(Thread t) {
    boolean interrupted = false;
    while (true) {
      try {
        t.join();
        break;
      } catch (InterruptedException e) {
        interrupted = true;
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }
}
