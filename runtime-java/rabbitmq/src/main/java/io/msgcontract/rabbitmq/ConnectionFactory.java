package io.msgcontract.rabbitmq;

import java.sql.Connection;
import java.sql.SQLException;

/**
 * Opens a connection to the business database (not to the broker); a
 * DataSource's getConnection fits. The same shape as runtime-java/kafka's.
 */
@FunctionalInterface
public interface ConnectionFactory {
  /** Returns a new connection; the caller closes it. */
  Connection open() throws SQLException;
}
