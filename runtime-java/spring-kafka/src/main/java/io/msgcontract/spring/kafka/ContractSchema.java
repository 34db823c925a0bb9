package io.msgcontract.spring.kafka;

import io.msgcontract.support.Ddl;
import io.msgcontract.support.DedupStore;
import io.msgcontract.support.Outbox;
import java.sql.Connection;
import java.sql.SQLException;
import javax.sql.DataSource;

/**
 * Creates the runtime's tables on the DataSource at start-up when {@code msgcontract.migrate=true}:
 * the dedup claims ({@code msg_dedup}), the retry chains ({@code msg_dedup_chain}) and the outbox
 * ({@code msg_outbox}, {@code msg_outbox_lock}), by the statements of the database's dialect (core's
 * {@link Ddl}; PostgreSQL, MySQL, MariaDB, SQLite), each {@code IF NOT EXISTS}.
 */
public final class ContractSchema {
  private final boolean migrated;

  private ContractSchema(boolean migrated) {
    this.migrated = migrated;
  }

  /**
   * Migrates dataSource when migrate is true.
   *
   * @param dataSource the business database
   * @param migrate msgcontract.migrate
   * @return what was done
   * @throws IllegalStateException naming msgcontract.migrate when the database refused
   */
  public static ContractSchema apply(DataSource dataSource, boolean migrate) {
    if (!migrate) {
      return new ContractSchema(false);
    }
    try (Connection c = dataSource.getConnection()) {
      c.setAutoCommit(true);
      String dialect = Ddl.dialect(c);
      DedupStore.migrate(c);
      Outbox.migrate(c, dialect);
    } catch (SQLException e) {
      throw new IllegalStateException("msgcontract.migrate=true: creating the dedup, retry chain and outbox tables "
          + "failed: " + e.getMessage() + " (grant the DDL, or create them by contracts/sql and set "
          + "msgcontract.migrate=false)", e);
    }
    return new ContractSchema(true);
  }

  /**
   * Reports whether the tables were created (or found) at start-up.
   *
   * @return whether msgcontract.migrate ran
   */
  public boolean migrated() {
    return migrated;
  }
}
