package io.msgcontract.support;

/** A failure whose code the contract retries. */
public final class RetryableException extends ContractException {
  private static final long serialVersionUID = 1L;

  /** Returns a failure with code, the name of the range holding it, and a message. */
  public RetryableException(int code, String range, String message) {
    super(code, range, message);
  }
}
