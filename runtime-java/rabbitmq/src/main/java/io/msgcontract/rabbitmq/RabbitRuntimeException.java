package io.msgcontract.rabbitmq;

/**
 * A RabbitMQ failure of the runtime: an unreachable broker, a declaration the
 * broker refused, a publish that was not confirmed (refused, timed out, or
 * refused at once while the broker blocks publishers on a memory or disk alarm).
 */
public class RabbitRuntimeException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /**
   * Returns the exception.
   *
   * @param message what failed, naming the exchange, queue or broker, and what to do
   * @param cause the client's exception, or null
   */
  public RabbitRuntimeException(String message, Throwable cause) {
    super(message, cause);
  }
}
