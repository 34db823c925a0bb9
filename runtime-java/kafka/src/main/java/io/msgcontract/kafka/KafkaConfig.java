package io.msgcontract.kafka;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;

/**
 * Configures {@link KafkaConsumerLoop}, {@link KafkaPublisher} and
 * {@link OutboxRelay}. The fields and their defaults are those of runtime-go's
 * kafka.Config, so a Go and a Java member of one group name the same topics
 * and groups. Set the fields, then call {@link #validate()} (the classes that
 * take a config call it too).
 */
public final class KafkaConfig {
  /** Seed brokers, "host:port[,host:port...]"; required. */
  public String brokers = "";
  /** Prepended to every topic and group name; "" by default. */
  public String namespace = "";
  /** Create missing topics (partitions, replicationFactor); true by default. */
  public boolean createTopics = true;
  /** Partitions of the topics created; 6 by default. */
  public int partitions = 6;
  /** Replication factor of the topics created; -1 (the broker's default) by default. */
  public short replicationFactor = -1;
  /** retention.ms of created dead-letter topics; 30 days by default, negative keeps them forever. */
  public long dlqRetentionMs = 30L * 24 * 3600 * 1000;
  /** Bound of the first contact with the cluster and of every topic check; 10 s by default. */
  public long connectTimeoutMs = 10_000;
  /** Bound of one record's delivery (delivery.timeout.ms); 30 s by default. */
  public long publishTimeoutMs = 30_000;
  /** The group session: a member silent this long loses its partitions; 10 s by default. */
  public int sessionTimeoutMs = 10_000;
  /** How often settled offsets are committed; 200 ms by default. */
  public long commitIntervalMs = 200;
  /** Records held from poll to commit; polling pauses at this many; 20,000 by default. */
  public int maxBuffered = 20_000;
  /** How long a delivery whose database failed waits before it runs again; 500 ms by default. */
  public long dbRetryMs = 500;
  /**
   * Deliveries that share one database transaction at most, as runtime-go's consumer shares one among
   * a fetch's messages (its FetchSize); 64 by default. The ready head of each key goes in, so a
   * transaction never holds two records of one key; each delivery runs in a savepoint of its own, so a
   * failing one takes back only its own claim and writes, and one commit settles the rest. Under light
   * load a transaction holds one delivery, which then runs without a savepoint. A failed commit hands
   * the whole batch back. 1 gives every delivery a transaction of its own (Go's PerMessageTx): set it
   * when a handler must be alone in its transaction. Handlers never commit or roll back themselves.
   */
  public int batchSize = 64;
  /**
   * Client properties passed to every Kafka client after the runtime's own:
   * TLS ("security.protocol", "ssl.*"), SASL ("sasl.*"), "client.id". Properties that would change
   * the delivery guarantees (acks, idempotence, group, commits) are refused by {@link #validate()}.
   */
  public Properties clientProperties = new Properties();
  /**
   * Base URL of a Confluent-compatible schema registry (`msgcontract registry serve`, or Confluent's); "" by
   * default. When set, event records are written in the Confluent wire format (value = the framed payload,
   * header msgcontract.envelope = the envelope without its payload) and framed records are checked
   * against it; see docs/runtime-java.md, "Confluent wire format".
   */
  public String registryUrl = "";

  /** The properties the runtime sets itself; clientProperties may not hold them. */
  static final List<String> RESERVED = List.of("acks", "enable.idempotence", "group.id", "enable.auto.commit",
      "auto.offset.reset", "key.serializer", "value.serializer", "key.deserializer", "value.deserializer",
      "isolation.level", "partition.assignment.strategy", "group.protocol");

  /**
   * Reports every missing or invalid field at once.
   *
   * @throws IllegalArgumentException naming each problem
   */
  public void validate() {
    List<String> errs = new ArrayList<>();
    if (brokers == null || brokers.isBlank()) {
      errs.add("kafka: brokers is required (host:port of at least one broker)");
    }
    if (partitions < 1) {
      errs.add("kafka: partitions " + partitions + " must be at least 1");
    }
    if (namespace == null || (!namespace.isEmpty() && !Topics.legalName(namespace))) {
      errs.add("kafka: namespace \"" + namespace + "\" may only hold ASCII letters, digits, '.', '_' and '-'");
    }
    if (maxBuffered < 1) {
      errs.add("kafka: maxBuffered " + maxBuffered + " must be at least 1");
    }
    if (batchSize < 1) {
      errs.add("kafka: batchSize " + batchSize + " must be at least 1 (1: a transaction per delivery)");
    }
    for (Map.Entry<String, Long> d : Map.of("connectTimeoutMs", connectTimeoutMs, "publishTimeoutMs",
        publishTimeoutMs, "sessionTimeoutMs", (long) sessionTimeoutMs, "commitIntervalMs", commitIntervalMs,
        "dbRetryMs", dbRetryMs).entrySet()) {
      if (d.getValue() <= 0) {
        errs.add("kafka: " + d.getKey() + " " + d.getValue() + " must be positive");
      }
    }
    if (registryUrl == null || (!registryUrl.isEmpty() && !httpUrl(registryUrl))) {
      errs.add("kafka: registryUrl \"" + registryUrl + "\" is not an http(s) URL with a host");
    }
    for (String k : RESERVED) {
      if (clientProperties != null && clientProperties.containsKey(k)) {
        errs.add("kafka: clientProperties may not set " + k + ": the runtime's delivery guarantees depend on it");
      }
    }
    if (!errs.isEmpty()) {
      throw new IllegalArgumentException(String.join("; ", errs));
    }
  }

  private static boolean httpUrl(String u) {
    try {
      java.net.URI x = new java.net.URI(u);
      return ("http".equals(x.getScheme()) || "https".equals(x.getScheme())) && x.getHost() != null
          && x.getQuery() == null && x.getFragment() == null;
    } catch (java.net.URISyntaxException e) {
      return false;
    }
  }

  /** Returns the common client properties: brokers, timeouts and clientProperties. */
  Properties base() {
    Properties p = new Properties();
    p.put("bootstrap.servers", brokers);
    p.put("request.timeout.ms", Long.toString(connectTimeoutMs));
    p.put("default.api.timeout.ms", Long.toString(Math.max(connectTimeoutMs, 10_000)));
    if (clientProperties != null) {
      p.putAll(clientProperties);
    }
    return p;
  }
}
