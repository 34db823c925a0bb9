package io.msgcontract.support;

import java.sql.Connection;
import java.sql.SQLException;

/**
 * Opens a connection to the business database (not to a broker); a
 * DataSource's getConnection fits. Each broker module's ConnectionFactory
 * extends it, so one lambda serves a consumer loop and an outbox relay.
 */
@FunctionalInterface
public interface ConnectionFactory {
  /** Returns a new connection; the caller closes it. */
  Connection open() throws SQLException;
}
