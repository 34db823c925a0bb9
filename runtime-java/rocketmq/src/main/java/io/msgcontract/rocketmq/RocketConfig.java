package io.msgcontract.rocketmq;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Configures {@link RocketPublisher} and {@link RocketConsumerLoop}. The names
 * and defaults are those of runtime-go's rocketmq.Config (docs/rocketmq.md,
 * "Names"), so Go, Java and Python services share topics, retry topics and
 * the dead-letter topic. Set the fields, then call {@link #validate()} (the
 * classes that take a config call it too).
 *
 * <p>RocketMQ's 5.x client cannot create topics: every topic this module
 * uses must exist ({@code mqadmin updateTopic}, or a runtime-go member, which
 * creates them), the retry topics with {@code +message.type=DELAY}.
 */
public final class RocketConfig {
  /** User property: the msgcontract topic of a message, so a copy in a retry topic knows where it came from. */
  public static final String PROP_TOPIC = "MSGCONTRACT_TOPIC";
  /** User property: a retry or deferred copy's not_before, in Unix ms. */
  public static final String PROP_NOT_BEFORE = "MSGCONTRACT_NOT_BEFORE";
  /** User property: the attempt of a copy handed back after its lease ran out (runtime-go's members set it). */
  public static final String PROP_ATTEMPT = "MSGCONTRACT_ATTEMPT";
  /** The suffix of a group's retry topic. */
  public static final String RETRY_SUFFIX = "_retry";
  /** The dead-letter topic, under the namespace. */
  public static final String DLQ_TOPIC = "msgcontract_dlq";
  /** The proxy refuses an invisible duration under this. */
  public static final long MIN_LEASE_MS = 10_000;

  /** The proxy's gRPC endpoint, host:port (several: "host1:port;host2:port"); required. */
  public String endpoints = "";
  /** Prepended to every topic and group name, as runtime-go's Config.Namespace; "" by default. */
  public String namespace = "";
  /**
   * How long a received message stays invisible to the group's other
   * members (the receive's invisible duration): the loop settles it within
   * this or lets it come again; 60 s by default, at least 10 s (the proxy's
   * minimum). Keep it above the handler's time.
   */
  public long leaseMs = 60_000;
  /**
   * How long before its not_before a retry or deferred copy is due on the
   * broker's timer; the loop holds it from then until not_before. 1 s by
   * default, as runtime-go's TimerLead: the timer fires up to about 150 ms
   * late, on a broker just started up to about a second.
   */
  public long timerLeadMs = 1_000;
  /** How long one receive waits for messages (the proxy's long polling); 5 s by default. */
  public long awaitMs = 5_000;
  /** Bound of one send and of the client's other requests; 10 s by default. */
  public long requestTimeoutMs = 10_000;
  /**
   * Deliveries that share one database transaction at most (each in a
   * savepoint, one commit), and how many one receive asks for; 32 by
   * default; 1 gives each delivery a transaction of its own.
   */
  public int batchSize = 32;
  /**
   * Messages the loop holds, received and not settled or held until
   * not_before, before it asks for more; 256 by default. Each topic's
   * receive may bring up to batchSize beyond it.
   */
  public int maxInFlight = 256;
  /** How long a delivery whose database failed waits before it runs again; 500 ms by default. */
  public long dbRetryMs = 500;
  /**
   * The msgcontract topics whose RocketMQ topics are FIFO topics (message
   * type FIFO, as runtime-go's Config.FIFOTopics creates them): {@link
   * RocketPublisher} gives each of their messages a message group, the
   * biz_key, which the proxy requires and which puts a key's messages in one
   * queue in publish order. A FIFO topic takes no transactional messages
   * ({@link RocketTxProducer} refuses it). Empty by default.
   */
  public List<String> fifoTopics = List.of();
  /**
   * The groups whose members keep a biz_key's messages in order (FIFO
   * groups): the broker must know each as an orderly consumer group, and its
   * retry topic's name as a non-orderly one, which its members read the
   * retry topic as (runtime-go's Config.FIFOGroups creates both; or {@code
   * mqadmin updateSubGroup -g NAME -o true}, and {@code -o false} for the
   * retry topic's name). Empty by default.
   */
  public List<String> fifoGroups = List.of();

  /**
   * Reports every missing or invalid field at once.
   *
   * @throws IllegalArgumentException naming each problem
   */
  public void validate() {
    List<String> errs = new ArrayList<>();
    if (endpoints == null || endpoints.isBlank()) {
      errs.add("rocketmq: endpoints is required (the proxy's gRPC address, host:8081)");
    }
    if (namespace == null) {
      errs.add("rocketmq: namespace is null (use \"\")");
    } else if (!sanitize(namespace).equals(namespace)) {
      errs.add("rocketmq: namespace \"" + namespace + "\" has characters other than letters, digits, '_' and '-'");
    }
    if (leaseMs < MIN_LEASE_MS) {
      errs.add("rocketmq: leaseMs " + leaseMs + " is under " + MIN_LEASE_MS + " (the proxy's shortest invisible duration)");
    }
    if (batchSize < 1 || batchSize > 32) {
      errs.add("rocketmq: batchSize " + batchSize + " is outside 1..32 (a receive returns at most 32)");
    }
    if (maxInFlight < batchSize) {
      errs.add("rocketmq: maxInFlight " + maxInFlight + " is under batchSize " + batchSize);
    }
    for (Map.Entry<String, Long> d : Map.of("timerLeadMs", timerLeadMs, "awaitMs", awaitMs, "requestTimeoutMs",
        requestTimeoutMs, "dbRetryMs", dbRetryMs).entrySet()) {
      if (d.getValue() <= 0) {
        errs.add("rocketmq: " + d.getKey() + " " + d.getValue() + " must be positive");
      }
    }
    checkNames(errs, "fifoTopics", fifoTopics);
    checkNames(errs, "fifoGroups", fifoGroups);
    if (leaseMs >= MIN_LEASE_MS && 2 * timerLeadMs + 1_000 >= leaseMs) {
      errs.add("rocketmq: timerLeadMs " + timerLeadMs + " leaves no room in leaseMs " + leaseMs
          + " (a copy may be held up to 2 × the lead + 1 s)");
    }
    if (!errs.isEmpty()) {
      throw new IllegalArgumentException(String.join("; ", errs));
    }
  }

  /** Adds to errs what is wrong with list field (a list of msgcontract names). */
  private static void checkNames(List<String> errs, String field, List<String> names) {
    if (names == null) {
      errs.add("rocketmq: " + field + " is null (use List.of())");
    } else if (names.stream().anyMatch(n -> n == null || n.isEmpty())) {
      errs.add("rocketmq: " + field + " has an empty or null name");
    }
  }

  /** True when msgcontract topic topic is one of {@link #fifoTopics}: its messages carry a message group. */
  public boolean isFifoTopic(String topic) {
    return fifoTopics.contains(topic);
  }

  /** True when group is one of {@link #fifoGroups}: its members keep a biz_key's messages in order. */
  public boolean isFifoGroup(String group) {
    return fifoGroups.contains(group);
  }

  /** The RocketMQ topic of msgcontract topic topic. */
  public String topicName(String topic) {
    return namespace + sanitize(topic);
  }

  /** The retry topic of group: retry, deferred and handed-back copies. */
  public String retryTopic(String group) {
    return namespace + sanitize(group) + RETRY_SUFFIX;
  }

  /** The RocketMQ consumer group of group. */
  public String groupName(String group) {
    return namespace + sanitize(group);
  }

  /** The dead-letter topic. */
  public String dlqTopic() {
    return namespace + DLQ_TOPIC;
  }

  /** The msgcontract topic of a RocketMQ topic name without its property: the name without the namespace. */
  String topicOf(String name) {
    return name.length() > namespace.length() && name.startsWith(namespace) ? name.substring(namespace.length()) : name;
  }

  /** s with every character outside [A-Za-z0-9_-] replaced by '_', as RocketMQ names allow (runtime-go's sanitize). */
  public static String sanitize(String s) {
    StringBuilder b = new StringBuilder(s.length());
    s.codePoints().forEach(c -> b.append(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
        || c == '_' || c == '-' ? (char) c : '_')); // one '_' per character, as Go's per rune
    return b.toString();
  }
}
