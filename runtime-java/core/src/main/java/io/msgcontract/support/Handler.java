package io.msgcontract.support;

import io.msgcontract.v1.Envelope;
import java.sql.Connection;

/**
 * A consumer's business function. It runs in the transaction that holds the
 * message's dedup claim and must write its effects through tx, so they
 * commit or roll back with the claim. Throw a {@link ContractException} to
 * report a contract error code; any other exception is unclassified.
 *
 * @param <M> the event message
 */
@FunctionalInterface
public interface Handler<M> {
  /** Handles one decoded message. */
  void handle(Connection tx, M message, Envelope envelope) throws Exception;
}
