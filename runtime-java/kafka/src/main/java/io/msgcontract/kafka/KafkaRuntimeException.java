package io.msgcontract.kafka;

/** A Kafka failure of the runtime: an unreachable cluster, a missing topic, a publish that failed. */
public class KafkaRuntimeException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /**
   * Returns the exception.
   *
   * @param message what failed, naming the topic or the brokers
   * @param cause the client's exception, or null
   */
  public KafkaRuntimeException(String message, Throwable cause) {
    super(message, cause);
  }
}
