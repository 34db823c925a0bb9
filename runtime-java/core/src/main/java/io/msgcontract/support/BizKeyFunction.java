package io.msgcontract.support;

/**
 * Renders an event's biz_key from its message; generated per event from
 * the contract's template.
 *
 * @param <M> the event message
 */
@FunctionalInterface
public interface BizKeyFunction<M> {
  /** Returns the key, or throws when a placeholder is empty or the key too long. */
  String bizKey(M message) throws BizKeyException;
}
