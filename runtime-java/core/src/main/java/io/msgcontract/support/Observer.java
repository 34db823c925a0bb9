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
   */
  record Outcome(String handler, String topic, String eventType, Envelope envelope, Decision decision,
      double handlerSeconds) {

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
