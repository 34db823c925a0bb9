package io.msgcontract.support;

/**
 * An envelope or payload that cannot be decoded. A message that does not
 * decode is never retried: it is dead-lettered at once.
 */
public final class DecodeException extends Exception {
  private static final long serialVersionUID = 1L;

  /** Returns a decode failure with its cause. */
  public DecodeException(String message, Throwable cause) {
    super(message, cause);
  }

  /** Returns a decode failure. */
  public DecodeException(String message) {
    super(message);
  }
}
