package io.msgcontract.spring.kafka;

import io.msgcontract.kafka.ConnectionFactory;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Savepoint;
import java.util.Set;
import javax.sql.DataSource;
import org.springframework.jdbc.datasource.ConnectionHolder;
import org.springframework.jdbc.datasource.DataSourceUtils;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.TransactionException;
import org.springframework.transaction.TransactionStatus;
import org.springframework.transaction.support.DefaultTransactionDefinition;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * The runtime's {@link ConnectionFactory} on a Spring application's {@link DataSource} and
 * {@link PlatformTransactionManager}: the dedup claim, the handler's writes (through the
 * {@link Connection} it is passed, a {@code JdbcTemplate}, or {@code @Transactional} code, which
 * joins) and the decision are one Spring-managed transaction.
 *
 * <p>{@link #open()} returns a connection that the runtime drives as a plain JDBC connection, and
 * that maps what it does onto the transaction manager:
 *
 * <ul>
 *   <li>In manual-commit mode ({@code setAutoCommit(false)}), the first statement or savepoint
 *       begins a transaction ({@code PROPAGATION_REQUIRED}, which must be a new one: the consumer
 *       thread holds none) and runs on the connection the transaction manager bound to the thread,
 *       the one {@link DataSourceUtils#getConnection} hands a {@code JdbcTemplate} too.
 *   <li>{@code commit()} and {@code rollback()} end it through the transaction manager.
 *   <li>Savepoints are the bound connection's. After {@code rollback(Savepoint)} the transaction's
 *       rollback-only mark is cleared: a failing {@code @Transactional} participant sets it, and
 *       one failing delivery of a shared batch, rolled back to its savepoint, must not roll back
 *       the others.
 *   <li>In auto-commit mode (the retry chain's single statements) statements run on a connection
 *       of the DataSource of their own, outside any transaction.
 *   <li>{@code close()} rolls back a transaction still open and gives every connection back.
 * </ul>
 *
 * <p>A connection it returns belongs to the thread that opened it.
 */
public final class SpringConnectionFactory implements ConnectionFactory {
  private static final Set<String> STATEMENTS =
      Set.of("createStatement", "prepareStatement", "prepareCall", "setSavepoint", "releaseSavepoint", "nativeSQL");

  private final DataSource dataSource;
  private final PlatformTransactionManager tm;

  /**
   * Returns a factory on dataSource, whose transactions tm manages (a
   * {@code DataSourceTransactionManager} or {@code JdbcTransactionManager} of that DataSource; a
   * {@code JpaTransactionManager} keeps a participant's rollback-only mark where a savepoint
   * rollback does not clear it, so with it give each delivery a transaction of its own:
   * {@code msgcontract.batch-size=1}).
   *
   * @param dataSource the business database
   * @param tm its transaction manager
   */
  public SpringConnectionFactory(DataSource dataSource, PlatformTransactionManager tm) {
    this.dataSource = dataSource;
    this.tm = tm;
  }

  /**
   * Returns the DataSource.
   *
   * @return the business database
   */
  public DataSource dataSource() {
    return dataSource;
  }

  @Override
  public Connection open() throws SQLException {
    State s = new State();
    return (Connection) Proxy.newProxyInstance(Connection.class.getClassLoader(), new Class<?>[] {Connection.class},
        (proxy, m, args) -> s.invoke(proxy, m, args));
  }

  /** One opened connection's state. */
  private final class State {
    private boolean autoCommit = true;
    private boolean closed;
    private TransactionStatus tx;
    private Connection bound;
    private Connection plain;

    Object invoke(Object proxy, Method m, Object[] args) throws Throwable {
      String name = m.getName();
      switch (name) {
        case "equals":
          return proxy == args[0];
        case "hashCode":
          return System.identityHashCode(proxy);
        case "toString":
          return "SpringConnectionFactory connection (" + (tx != null ? "in a transaction" : "no transaction") + ")";
        case "isClosed":
          return closed;
        case "close":
          close();
          return null;
        default:
          break;
      }
      if (closed) {
        throw new SQLException("msgcontract: connection is closed");
      }
      switch (name) {
        case "getAutoCommit":
          return autoCommit;
        case "setAutoCommit":
          setAutoCommit((Boolean) args[0]);
          return null;
        case "commit":
          if (autoCommit) {
            throw new SQLException("msgcontract: commit in auto-commit mode");
          }
          end(true);
          return null;
        case "rollback":
          if (args == null || args.length == 0) {
            if (autoCommit) {
              throw new SQLException("msgcontract: rollback in auto-commit mode");
            }
            end(false);
            return null;
          }
          rollbackTo((Savepoint) args[0]);
          return null;
        default:
          break;
      }
      Connection target;
      if (autoCommit) {
        if (name.equals("setSavepoint") || name.equals("releaseSavepoint")) {
          throw new SQLException("msgcontract: savepoint in auto-commit mode");
        }
        target = plain();
      } else if (STATEMENTS.contains(name) || tx != null) {
        target = begin();
      } else {
        // metadata, warnings, isValid and the like: no need to begin a transaction for them
        target = plain();
      }
      try {
        return m.invoke(target, args);
      } catch (InvocationTargetException e) {
        throw e.getCause();
      }
    }

    private void setAutoCommit(boolean on) throws SQLException {
      if (on && !autoCommit && tx != null) {
        end(true); // JDBC: switching auto-commit on commits the transaction
      }
      autoCommit = on;
    }

    private Connection plain() throws SQLException {
      if (plain == null) {
        plain = dataSource.getConnection();
        plain.setAutoCommit(true);
      }
      return plain;
    }

    private Connection begin() throws SQLException {
      if (tx == null) {
        if (TransactionSynchronizationManager.isActualTransactionActive()) {
          throw new SQLException("msgcontract: a delivery's transaction must be its own, but this thread is "
              + "in a Spring transaction already; run deliveries on the listener container's thread");
        }
        DefaultTransactionDefinition def = new DefaultTransactionDefinition(TransactionDefinition.PROPAGATION_REQUIRED);
        def.setName("msgcontract delivery");
        tx = tm.getTransaction(def);
        bound = DataSourceUtils.getConnection(dataSource);
      }
      return bound;
    }

    private void rollbackTo(Savepoint sp) throws SQLException {
      if (tx == null) {
        throw new SQLException("msgcontract: no transaction to roll back to a savepoint of");
      }
      bound.rollback(sp);
      // What rolled back to the savepoint is undone; a participant that failed in it must not doom the rest.
      if (TransactionSynchronizationManager.getResource(dataSource) instanceof ConnectionHolder h) {
        h.resetRollbackOnly();
      }
    }

    private void end(boolean commit) throws SQLException {
      TransactionStatus t = tx;
      if (t == null) {
        return;
      }
      tx = null;
      // Handed back while the transaction still holds it: a release, not a close.
      DataSourceUtils.releaseConnection(bound, dataSource);
      bound = null;
      try {
        if (commit) {
          tm.commit(t);
        } else {
          tm.rollback(t);
        }
      } catch (TransactionException e) {
        throw new SQLException("msgcontract: the delivery's transaction did not " + (commit ? "commit" : "roll back")
            + ": " + e.getMessage(), e);
      }
    }

    private void close() throws SQLException {
      if (closed) {
        return;
      }
      closed = true;
      try {
        end(false);
      } finally {
        if (plain != null) {
          plain.close();
          plain = null;
        }
      }
    }
  }
}
