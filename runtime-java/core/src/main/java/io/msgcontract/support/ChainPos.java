package io.msgcontract.support;

/**
 * A copy's place in its message's retry chain ({@link RetryChain}), as runtime-go's {@code
 * dedup.ChainPos} and Python's {@code dedup.ChainPos}.
 *
 * @param replayCount the envelope's replay_count
 * @param attempt the envelope's retry_count
 * @param deliveryId the transport's id of the stored copy (Kafka: "&lt;topic&gt;/&lt;partition&gt;/&lt;offset&gt;",
 *     the topic as the broker names it), the same on every redelivery of it
 */
public record ChainPos(int replayCount, int attempt, String deliveryId) {}
