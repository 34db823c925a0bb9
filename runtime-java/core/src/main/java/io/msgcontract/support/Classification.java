package io.msgcontract.support;

/**
 * The classification of a handler failure.
 *
 * @param retryable whether the failure is retried
 * @param range the name of the range holding the code; "" when the code fell
 *     outside every range, the error had no code, or the payload did not decode
 */
public record Classification(boolean retryable, String range) {}
