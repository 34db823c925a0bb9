package io.msgcontract.support;

/** A failure whose code the contract never retries: the message is dead-lettered. */
public final class NonRetryableException extends ContractException {
  private static final long serialVersionUID = 1L;

  /** Returns a failure with code, the name of the range holding it, and a message. */
  public NonRetryableException(int code, String range, String message) {
    super(code, range, message);
  }
}
