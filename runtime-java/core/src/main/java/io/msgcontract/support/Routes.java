package io.msgcontract.support;

import com.google.protobuf.Message;
import io.msgcontract.v1.Envelope;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * A broker loop's handlers by topic and event type, and the steps of a
 * delivery before the database, as runtime-go's consumer takes them: decode
 * the envelope, route it (by the topic it came on, else the envelope's own),
 * decode the payload, and check not_before. The RabbitMQ and RocketMQ loops
 * share it; each carries out what {@link #prepare} says.
 */
public final class Routes {
  /** The code of a message with no handler for its event type, as in the Go runtime. */
  public static final int CODE_NO_HANDLER = -4;

  private final String broker;
  private final Map<String, Map<String, Route<?>>> byTopic = new LinkedHashMap<>();

  /**
   * One handler's route.
   *
   * @param spec the event it handles
   * @param handlerName the dedup key's second half
   * @param consumer the consumer that runs it
   */
  public record Route<M extends Message>(EventSpec<M> spec, String handlerName, Consumer<M> consumer) {}

  /** What the steps before the database came to. */
  public sealed interface Prepared permits Ready, NotDue, Dead {}

  /** Ready for the database: its route and envelope. */
  public record Ready(Route<?> route, Envelope env) implements Prepared {}

  /** Not to be handled before notBeforeMs: the loop defers it. */
  public record NotDue(long notBeforeMs) implements Prepared {}

  /**
   * To be dead-lettered without running a handler.
   *
   * @param handler the handler name, "" when none was found
   * @param env the envelope, null when it did not decode
   * @param reason decode or no_handler
   * @param code {@link Consumer#CODE_DECODE} or {@link #CODE_NO_HANDLER}
   * @param error what was wrong
   */
  public record Dead(String handler, Envelope env, String reason, int code, String error) implements Prepared {}

  /** Returns empty routes; broker names the loop in messages ("rabbitmq", "rocketmq"). */
  public Routes(String broker) {
    this.broker = broker;
  }

  /**
   * Adds c as the handler of spec's event type on spec's topic.
   *
   * @throws IllegalArgumentException when that topic and event type have a handler already
   */
  public <M extends Message> void add(EventSpec<M> spec, String handlerName, Consumer<M> c) {
    Map<String, Route<?>> byType = byTopic.computeIfAbsent(spec.topic(), t -> new HashMap<>());
    if (byType.containsKey(spec.eventType())) {
      throw new IllegalArgumentException(broker + ": a handler for " + spec.eventType() + " on " + spec.topic()
          + " is registered already");
    }
    byType.put(spec.eventType(), new Route<>(spec, handlerName, c));
  }

  /** The topics with a handler, in the order they were added. */
  public Set<String> topics() {
    return Collections.unmodifiableSet(byTopic.keySet());
  }

  /** True when no handler was added. */
  public boolean isEmpty() {
    return byTopic.isEmpty();
  }

  private Route<?> lookup(String topic, String eventType) {
    Map<String, Route<?>> m = byTopic.get(topic);
    return m == null ? null : m.get(eventType);
  }

  /**
   * The steps before the database of body, delivered on topic to group's
   * member at nowMs.
   */
  public Prepared prepare(String topic, byte[] body, String group, long nowMs) {
    Envelope env;
    try {
      env = Envelopes.decode(body);
    } catch (DecodeException x) {
      return undecodable(x);
    }
    return prepare(topic, env, group, nowMs);
  }

  /**
   * What {@link #prepare(String, byte[], String, long)} says of a body that
   * is no envelope: dead-lettered as decode, with no handler.
   */
  public static Dead undecodable(DecodeException x) {
    return new Dead("", null, "decode", Consumer.CODE_DECODE, String.valueOf(x.getMessage()));
  }

  /**
   * The steps after the envelope's decoding, for a loop that decoded it
   * already (a FIFO loop reads the biz_key for its line first).
   */
  public Prepared prepare(String topic, Envelope env, String group, long nowMs) {
    Route<?> r = lookup(topic, env.getEventType());
    if (r == null && !env.getTopic().isEmpty() && !env.getTopic().equals(topic)) {
      topic = env.getTopic();
      r = lookup(topic, env.getEventType());
    }
    if (r == null) {
      return new Dead("", env, "no_handler", CODE_NO_HANDLER, "no handler for event type \"" + env.getEventType()
          + "\" on topic \"" + topic + "\" in group \"" + group + "\"");
    }
    try {
      Envelopes.payload(r.spec(), env);
    } catch (DecodeException x) {
      return new Dead(r.handlerName(), env, "decode", Consumer.CODE_DECODE, String.valueOf(x.getMessage()));
    }
    if (env.getNotBefore() > nowMs) {
      return new NotDue(env.getNotBefore());
    }
    return new Ready(r, env);
  }
}
