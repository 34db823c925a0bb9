package io.msgcontract.rabbitmq;

import com.rabbitmq.client.BuiltinExchangeType;
import com.rabbitmq.client.Channel;
import java.io.IOException;
import java.util.HashMap;
import java.util.Map;

/**
 * The names and declarations of docs/rabbitmq.md ("Names"), exactly as
 * runtime-go/transport/rabbitmq declares them, argument for argument and type
 * for type: a redeclare with different arguments fails with
 * PRECONDITION_FAILED (406), so every language's members must agree.
 *
 * <pre>
 * P                     topic exchange, alternate-exchange P.unrouted: routing key = topic
 * P.retry               direct exchange: routing key = a group queue's name
 * P.delay               direct exchange: routing key = a delay queue's name
 * P.unrouted            fanout exchange and its quorum queue
 * P/&lt;group&gt;/&lt;topic&gt;     a group's quorum queue of a topic
 * P.delay/&lt;group&gt;/&lt;ms&gt;  a group's delay queue (x-message-ttl = ms = 2^k, k = 4..31)
 * P.dlq                 dead-letter records (quorum)
 * </pre>
 */
public final class Topology {
  /** The shortest delay queue's exponent: 2^4 = 16 ms; a shorter wait is held in the consumer. */
  public static final int MIN_EXP = 4;
  /** The longest delay queue's exponent: 2^31 ms, 24.9 days; a longer wait takes several hops. */
  public static final int MAX_EXP = 31;
  /** The longest delay queue a member declares when it starts: 2^12 ms, 4.1 s. */
  public static final int PREDECLARE_EXP = 12;
  /** The shortest delay, in ms: a wait shorter than this is held in the consumer. */
  public static final long MIN_DELAY_MS = 1L << MIN_EXP;

  private final String p;

  /**
   * Returns the names under prefix.
   *
   * @param prefix P; see {@link RabbitConfig#prefix}
   */
  public Topology(String prefix) {
    this.p = prefix;
  }

  /** P, the topic exchange events are published to. */
  public String topicExchange() {
    return p;
  }

  /** P.retry, the direct exchange that routes to one group's queue. */
  public String retryExchange() {
    return p + ".retry";
  }

  /** P.delay, the direct exchange of the delay queues. */
  public String delayExchange() {
    return p + ".delay";
  }

  /** P.unrouted, the alternate exchange of P and its queue. */
  public String unrouted() {
    return p + ".unrouted";
  }

  /** P.dlq, the dead-letter queue. */
  public String dlq() {
    return p + ".dlq";
  }

  /** P/group/topic, group's queue of topic. */
  public String queue(String group, String topic) {
    return p + "/" + group + "/" + topic;
  }

  /** P.delay/group/2^exp, group's delay queue of 2^exp ms. */
  public String delayQueue(String group, int exp) {
    return p + ".delay/" + group + "/" + (1L << exp);
  }

  /**
   * The delay queue for a wait of waitMs: the exponent of the longest one
   * not longer than the wait (at most {@link #MAX_EXP}), or -1 when the wait
   * is shorter than {@link #MIN_DELAY_MS} (the message is held in the
   * consumer instead).
   */
  public static int bucket(long waitMs) {
    if (waitMs < MIN_DELAY_MS) {
      return -1;
    }
    return Math.min(63 - Long.numberOfLeadingZeros(waitMs), MAX_EXP);
  }

  /** x-queue-type = quorum plus extra. */
  static Map<String, Object> quorum(Map<String, Object> extra) {
    Map<String, Object> args = new HashMap<>(extra);
    args.put("x-queue-type", "quorum");
    return args;
  }

  /** The arguments of a delay queue of 2^exp ms (x-message-ttl a signed 64-bit Long). */
  Map<String, Object> delayArguments(int exp) {
    return quorum(Map.of("x-message-ttl", Long.valueOf(1L << exp), "x-dead-letter-exchange", retryExchange(),
        "x-dead-letter-strategy", "at-least-once", "x-overflow", "reject-publish"));
  }

  /** Declares the four exchanges and the queues P.unrouted (bound to its exchange) and P.dlq: what a producer uses. */
  void declareBase(Channel ch) throws IOException {
    ch.exchangeDeclare(unrouted(), BuiltinExchangeType.FANOUT, true, false, false, null);
    ch.exchangeDeclare(topicExchange(), BuiltinExchangeType.TOPIC, true, false, false,
        Map.of("alternate-exchange", unrouted()));
    ch.exchangeDeclare(retryExchange(), BuiltinExchangeType.DIRECT, true, false, false, null);
    ch.exchangeDeclare(delayExchange(), BuiltinExchangeType.DIRECT, true, false, false, null);
    ch.queueDeclare(unrouted(), true, false, false, quorum(Map.of()));
    ch.queueDeclare(dlq(), true, false, false, quorum(Map.of()));
    ch.queueBind(unrouted(), unrouted(), "");
  }

  /** Declares group's queue of topic, bound to P (key topic) and to P.retry (key: its name). */
  void declareGroup(Channel ch, String group, String topic) throws IOException {
    String q = queue(group, topic);
    ch.queueDeclare(q, true, false, false, quorum(Map.of()));
    ch.queueBind(q, topicExchange(), topic);
    ch.queueBind(q, retryExchange(), q);
  }

  /** Declares group's delay queue of 2^exp ms, bound to P.delay with its name. */
  void declareDelay(Channel ch, String group, int exp) throws IOException {
    String q = delayQueue(group, exp);
    ch.queueDeclare(q, true, false, false, delayArguments(exp));
    ch.queueBind(q, delayExchange(), q);
  }
}
