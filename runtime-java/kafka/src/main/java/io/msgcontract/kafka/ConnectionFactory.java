package io.msgcontract.kafka;

import java.sql.Connection;
import java.sql.SQLException;

/** Opens a connection to the business database; a DataSource's getConnection fits. */
@FunctionalInterface
public interface ConnectionFactory {
  /** Returns a new connection; the caller closes it. */
  Connection open() throws SQLException;
}
