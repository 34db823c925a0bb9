package io.msgcontract.spring.kafka;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Savepoint;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.DriverManagerDataSource;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.transaction.support.TransactionTemplate;

/** SpringConnectionFactory on the real databases: the JDBC calls of core's Consumer as Spring transactions. */
class ConnectionFactoryTest {
  Infra.TestDb db;

  @AfterEach
  void close() throws SQLException {
    if (db != null) {
      db.close();
    }
  }

  record Setup(SpringConnectionFactory f, JdbcTemplate jdbc, TransactionTemplate participant) {}

  Setup setup(Db kind) throws SQLException {
    db = new Infra.TestDb(kind);
    DriverManagerDataSource ds = new DriverManagerDataSource(db.url, db.user, db.password);
    DataSourceTransactionManager tm = new DataSourceTransactionManager(ds);
    return new Setup(new SpringConnectionFactory(ds, tm), new JdbcTemplate(ds), new TransactionTemplate(tm));
  }

  static void pay(Connection c, String id) throws SQLException {
    try (PreparedStatement st = c.prepareStatement("INSERT INTO payments (order_id, amount, member) VALUES (?, 1, 'tx')")) {
      st.setString(1, id);
      st.executeUpdate();
    }
  }

  @ParameterizedTest
  @EnumSource(Db.class)
  void aSavepointRollbackClearsTheRollbackOnlyMarkOfAFailedParticipant(Db kind) throws Exception {
    Setup s = setup(kind);
    try (Connection c = s.f().open()) {
      c.setAutoCommit(false);
      pay(c, "a");
      Savepoint sp = c.setSavepoint();
      // A REQUIRED participant (as @Transactional code is) writes and fails: it marks the transaction rollback-only.
      assertThrows(IllegalStateException.class, () -> s.participant().executeWithoutResult(st -> {
        s.jdbc().update("INSERT INTO payments (order_id, amount, member) VALUES ('b', 1, 'tx')");
        throw new IllegalStateException("the participant failed");
      }));
      c.rollback(sp);
      pay(c, "c");
      c.commit();
    }
    assertEquals(1, db.count("SELECT count(*) FROM payments WHERE order_id = 'a'"));
    assertEquals(0, db.count("SELECT count(*) FROM payments WHERE order_id = 'b'"));
    assertEquals(1, db.count("SELECT count(*) FROM payments WHERE order_id = 'c'"));
  }

  @ParameterizedTest
  @EnumSource(Db.class)
  void aJdbcTemplateJoinsTheTransactionAndCloseRollsItBack(Db kind) throws Exception {
    Setup s = setup(kind);
    try (Connection c = s.f().open()) {
      c.setAutoCommit(false);
      pay(c, "kept");
      assertTrue(TransactionSynchronizationManager.isActualTransactionActive());
      s.jdbc().update("INSERT INTO payments (order_id, amount, member) VALUES ('kept-too', 1, 'jdbc')");
      assertEquals(0, db.count("SELECT count(*) FROM payments"), "visible before the commit");
      c.commit();
      assertFalse(TransactionSynchronizationManager.isActualTransactionActive());
      // The next statement begins the next transaction; close without a commit rolls it back.
      pay(c, "dropped");
      s.jdbc().update("INSERT INTO payments (order_id, amount, member) VALUES ('dropped-too', 1, 'jdbc')");
    }
    assertFalse(TransactionSynchronizationManager.isActualTransactionActive());
    assertEquals(2, db.count("SELECT count(*) FROM payments"));
    assertEquals(0, db.count("SELECT count(*) FROM payments WHERE order_id LIKE 'dropped%'"));
  }

  @ParameterizedTest
  @EnumSource(Db.class)
  void autoCommitStatementsRunOutsideAnyTransaction(Db kind) throws Exception {
    Setup s = setup(kind);
    try (Connection c = s.f().open()) {
      assertTrue(c.getAutoCommit());
      pay(c, "auto");
      assertFalse(TransactionSynchronizationManager.isActualTransactionActive());
      assertEquals(1, db.count("SELECT count(*) FROM payments WHERE order_id = 'auto'"));
      assertThrows(SQLException.class, c::setSavepoint);
      // setAutoCommit(true) commits an open transaction, as JDBC says.
      c.setAutoCommit(false);
      pay(c, "switched");
      c.setAutoCommit(true);
      assertFalse(TransactionSynchronizationManager.isActualTransactionActive());
      assertEquals(1, db.count("SELECT count(*) FROM payments WHERE order_id = 'switched'"));
    }
  }
}
