package io.msgcontract.support;

import io.msgcontract.v1.Envelope;

/**
 * What the transport must do with a delivery after {@link Consumer#process}:
 * the consumer skeleton is transport-neutral, so the caller publishes the
 * decision.
 */
public sealed interface Decision permits Decision.Ack, Decision.Defer, Decision.Retry, Decision.DeadLetter {

  /**
   * Acknowledge the delivery.
   *
   * @param deduplicated true when the message was a duplicate and the handler did not run
   */
  record Ack(boolean deduplicated) implements Decision {}

  /**
   * Hand the delivery back unacknowledged until notBeforeMs: it is not due yet.
   *
   * @param notBeforeMs when the message becomes due, UTC epoch milliseconds
   */
  record Defer(long notBeforeMs) implements Decision {}

  /**
   * Publish nextEnvelope to the retry destination, then acknowledge.
   *
   * @param nextEnvelope the copy with retry_count+1, not_before and last_error set
   * @param delayMs the backoff delay that not_before includes
   */
  record Retry(Envelope nextEnvelope, long delayMs) implements Decision {}

  /**
   * Publish the original body to the dead-letter destination, then acknowledge.
   *
   * @param reason why: "decode", "non_retryable" or "retries_exhausted"
   * @param code the handler's error code, 0 when it had none
   * @param error the failure's message
   * @param attempts how many times the handler ran, 0 when it never did
   */
  record DeadLetter(String reason, int code, String error, int attempts) implements Decision {}
}
