package io.msgcontract.support;

/**
 * A resolved retry policy. Retry n (1-based) waits
 * {@code d(n) + floor(jitterMs * u)}, u uniform in [0,1), where
 * {@code d(1) = baseMs} and {@code d(n) = min(maxDelayMs, floor(d(n-1) *
 * multiplier))}, iterated in integer milliseconds (never pow) so every
 * language computes the same number. After maxRetries retries the message
 * is dead-lettered.
 *
 * @param baseMs d(1), never capped
 * @param multiplier growth factor, at least 1
 * @param jitterMs the largest random addition
 * @param maxDelayMs cap of d(n) from n = 2 on
 * @param maxRetries retries before dead-lettering, 0..30
 */
public record RetryPolicy(long baseMs, double multiplier, long jitterMs, long maxDelayMs, int maxRetries) {

  /** Returns d(n), the delay of retry n without jitter; 0 for n below 1. */
  public long baseDelay(int n) {
    if (n < 1) {
      return 0;
    }
    long d = baseMs;
    for (int i = 2; i <= n; i++) {
      double next = Math.floor((double) d * multiplier);
      // Compare as doubles before converting: a product past Long.MAX_VALUE
      // must cap, not overflow.
      d = next >= (double) maxDelayMs ? maxDelayMs : (long) next;
    }
    return d;
  }

  /** Returns the delay of retry n in milliseconds for the uniform sample u in [0,1). */
  public long delayMs(int n, double u) {
    return baseDelay(n) + (long) Math.floor((double) jitterMs * u);
  }

  /** Reports whether retry n is past the policy: the message must be dead-lettered instead. */
  public boolean deadLetter(int n) {
    return n > maxRetries;
  }
}
