package io.msgcontract.support;

/**
 * A handler failure carrying a contract error code. Handlers throw it (or
 * let {@link ErrorRules#error} pick the subclass) so that the consumer
 * classifies the failure by the contract's error ranges; the code decides,
 * never the subclass.
 */
public abstract sealed class ContractException extends Exception
    permits RetryableException, NonRetryableException {
  private static final long serialVersionUID = 1L;

  private final int code;
  private final String range;

  ContractException(int code, String range, String message) {
    super("code " + code + ": " + message);
    this.code = code;
    this.range = range;
  }

  /** The contract error code. */
  public int code() {
    return code;
  }

  /** The name of the error range holding the code; "" when unclassified. */
  public String range() {
    return range;
  }
}
