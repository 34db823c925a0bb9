package io.msgcontract.support;

import io.msgcontract.v1.Envelope;

/**
 * Starts a span for each delivery {@link Consumer#process} decodes, makes it current while the
 * handler runs, and ends it at the outcome. {@code io.msgcontract.observe.Tracing} implements it
 * with OpenTelemetry; without one ({@link Consumer#withTracer} never called) the consumer makes
 * no tracing call at all.
 */
public interface DeliveryTracer {

  /**
   * Starts the span of one delivery whose envelope decoded.
   *
   * @param topic the event's topic
   * @param handler the handler name
   * @param envelope the decoded envelope, whose trace field the span continues
   * @return the span
   */
  Traced start(String topic, String handler, Envelope envelope);

  /**
   * Like {@link #start(String, String, Envelope)} for a delivery the transport names: the
   * tracer may read where the message sat from it (Kafka: {@code <topic>/<partition>/<offset>}).
   *
   * @param topic the event's topic
   * @param handler the handler name
   * @param envelope the decoded envelope
   * @param deliveryId the transport's id of the delivery, or null
   * @return the span
   */
  default Traced start(String topic, String handler, Envelope envelope, String deliveryId) {
    return start(topic, handler, envelope);
  }

  /** One delivery's span. */
  interface Traced {
    /**
     * Makes the span current (the handler's own spans and publishes become its children).
     *
     * @return closes to restore the previous current span
     */
    Scope activate();

    /**
     * Records the outcome and ends the span.
     *
     * @param decision what the consumer decided, null when the database failed and the delivery
     *     is handed back
     * @param error the handler's failure or the database's, null when none
     */
    void end(Decision decision, Throwable error);
  }

  /** A span made current; close restores the previous one. */
  interface Scope extends AutoCloseable {
    @Override
    void close();
  }
}
