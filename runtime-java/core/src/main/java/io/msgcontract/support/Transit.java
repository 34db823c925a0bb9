package io.msgcontract.support;

/** The answer of canTransit, identical in every language. */
public enum Transit {
  /** from is a listed predecessor of to. */
  ALLOWED,
  /** from == to: the work was already done, succeed quietly. */
  DUPLICATE,
  /** Anything else: out-of-order or dirty data, alert. */
  ILLEGAL,
}
