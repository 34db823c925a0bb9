package io.msgcontract.support;

import java.util.List;

/**
 * A contract's error ranges and its unclassified setting. A code is
 * classified by the range holding it; codes outside every range, and errors
 * with no code, follow {@code unclassifiedRetryable}; a payload that fails
 * to decode is never retryable.
 *
 * @param ranges non-overlapping ranges, as declared
 * @param unclassifiedRetryable how codes outside every range and errors without a code are treated
 */
public record ErrorRules(List<ErrorRange> ranges, boolean unclassifiedRetryable) {

  /** Copies ranges, so the rules cannot change after construction. */
  public ErrorRules {
    ranges = List.copyOf(ranges);
  }

  /** Classifies an error carrying code. */
  public Classification classify(int code) {
    for (ErrorRange r : ranges) {
      if (r.contains(code)) {
        return new Classification(r.retryable(), r.name());
      }
    }
    return new Classification(unclassifiedRetryable, "");
  }

  /** Classifies an error that carries no code. */
  public Classification noCode() {
    return new Classification(unclassifiedRetryable, "");
  }

  /** Classifies any handler failure: by its code when it is a {@link ContractException}, else as uncoded. */
  public Classification classify(Throwable t) {
    if (t instanceof ContractException ce) {
      return classify(ce.code());
    }
    return noCode();
  }

  /** Classifies a payload that failed to decode: never retryable. */
  public static Classification decodeFailure() {
    return new Classification(false, "");
  }

  /**
   * Returns the typed exception for a handler failure with code:
   * a {@link RetryableException} when the rules retry it, a
   * {@link NonRetryableException} otherwise.
   */
  public ContractException error(int code, String message) {
    Classification c = classify(code);
    if (c.retryable()) {
      return new RetryableException(code, c.range(), message);
    }
    return new NonRetryableException(code, c.range(), message);
  }
}
