package io.msgcontract.rocketmq;

/** A RocketMQ request that failed: the proxy unreachable, a topic missing, a send refused. */
public final class RocketRuntimeException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /** Returns an exception with message and its cause. */
  public RocketRuntimeException(String message, Throwable cause) {
    super(message, cause);
  }

  /** Returns an exception with message. */
  public RocketRuntimeException(String message) {
    super(message);
  }
}
