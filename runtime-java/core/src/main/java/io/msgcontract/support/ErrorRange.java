package io.msgcontract.support;

/**
 * An inclusive range of handler error codes and how failures in it are
 * treated.
 *
 * @param from the lowest code of the range
 * @param to the highest code of the range
 * @param retryable whether failures in the range are retried
 * @param name the range's name, reported as a classification's range
 */
public record ErrorRange(int from, int to, boolean retryable, String name) {
  /** Reports whether code lies in the range. */
  public boolean contains(int code) {
    return from <= code && code <= to;
  }
}
