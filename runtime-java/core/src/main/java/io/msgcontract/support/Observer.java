package io.msgcontract.support;

import io.msgcontract.v1.Envelope;

/**
 * Sees every delivery's outcome, for metrics and logs: {@link Consumer} calls it once per
 * {@link Consumer#process} that returned a decision. It has no dependency of its own;
 * {@code io.msgcontract.observe} implements it with the Prometheus Java client and as JSON log
 * lines, in the vocabulary of docs/DESIGN.md ("Observability") that the Go and Python runtimes
 * share.
 */
@FunctionalInterface
public interface Observer {

  /** An observer that does nothing, the default. */
  Observer NONE = o -> { };

  /**
   * Called after the consumer decided.
   *
   * @param outcome what happened to the delivery
   */
  void observe(Outcome outcome);

  /**
   * One delivery's outcome.
   *
   * @param handler the handler name
   * @param topic the event's topic
   * @param eventType the event type, "" when the envelope did not decode
   * @param envelope the decoded envelope, null when it did not decode
   * @param decision what the consumer returned
   * @param handlerSeconds the handler's run time, NaN when it did not run
   * @param endToEndSeconds for a handled delivery, the time from the envelope's occurred_at to the
   *     consumer's clock once its transaction committed (0 when the producer's clock is ahead); NaN
   *     for every other outcome and for an envelope without occurred_at
   */
  record Outcome(String handler, String topic, String eventType, Envelope envelope, Decision decision,
      double handlerSeconds, double endToEndSeconds) {

    /**
     * An outcome without an end-to-end latency.
     *
     * @param handler the handler name
     * @param topic the event's topic
     * @param eventType the event type, "" when the envelope did not decode
     * @param envelope the decoded envelope, null when it did not decode
     * @param decision what the consumer returned
     * @param handlerSeconds the handler's run time, NaN when it did not run
     */
    public Outcome(String handler, String topic, String eventType, Envelope envelope, Decision decision,
        double handlerSeconds) {
      this(handler, topic, eventType, envelope, decision, handlerSeconds, Double.NaN);
    }

    /**
     * The end-to-end latency of a delivery handled at nowMs, as {@link #endToEndSeconds()} holds
     * it: NaN when the envelope has no occurred_at, never negative (a negative observation would
     * lower a histogram's sum, which Prometheus' rate() reads as a counter reset).
     *
     * @param env the handled envelope
     * @param nowMs the consumer's clock after the commit, UTC epoch milliseconds
     * @return the latency in seconds, or NaN
     */
    public static double endToEndSeconds(Envelope env, long nowMs) {
      long at = env.getOccurredAt();
      return at <= 0 ? Double.NaN : Math.max(nowMs - at, 0) / 1000.0;
    }

    /**
     * The outcome label value: handled, deduplicated, retry_scheduled, dead_lettered, or null for a
     * deferred delivery (not final yet).
     *
     * @return the label value or null
     */
    public String label() {
      if (decision instanceof Decision.Ack a) {
        return a.deduplicated() ? "deduplicated" : "handled";
      }
      if (decision instanceof Decision.Retry) {
        return "retry_scheduled";
      }
      if (decision instanceof Decision.DeadLetter) {
        return "dead_lettered";
      }
      return null;
    }
  }
}
