package io.msgcontract.kafka;

/**
 * Opens a connection to the business database (not to the broker); a DataSource's getConnection
 * fits. It is core's {@link io.msgcontract.support.ConnectionFactory} under this module's name, so
 * one lambda serves the consumer loop and the outbox relay.
 */
@FunctionalInterface
public interface ConnectionFactory extends io.msgcontract.support.ConnectionFactory {}
