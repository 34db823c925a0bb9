package io.msgcontract.rabbitmq;

import java.net.URI;
import java.net.URISyntaxException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Configures {@link RabbitPublisher}, {@link RabbitConsumerLoop},
 * {@link RabbitDeadLetters} and {@link RabbitOutboxRelay}. The fields and their
 * defaults are those of runtime-go's rabbitmq.Config, so Go, Java and Python
 * members name the same exchanges and queues (docs/rabbitmq.md, "Names"). Set
 * the fields, then call {@link #validate()} (the classes that take a config
 * call it too).
 */
public final class RabbitConfig {
  /** The default prefix of every exchange and queue. */
  public static final String DEFAULT_PREFIX = "msgcontract";

  /** The broker's AMQP 0-9-1 address, amqp://user:password@host:5672/vhost (amqps:// for TLS); required. */
  public String url = "";
  /** Names every exchange and queue (P in docs/rabbitmq.md); "msgcontract" by default. */
  public String prefix = DEFAULT_PREFIX;
  /**
   * Topic to the groups that consume it: the publisher declares their queues
   * at start, so a message published before a group's first member runs is
   * kept for it (RabbitMQ gives a group only what is published after its
   * queue exists). Empty by default.
   */
  public Map<String, List<String>> topology = new LinkedHashMap<>();
  /**
   * basic.qos of the loop's channel: how many unacknowledged deliveries the
   * broker sends ahead; 0, the default, takes {@link #batchSize}.
   */
  public int prefetch;
  /**
   * How long the loop holds a delivery unsettled before it hands it back
   * (basic.nack, requeue) to be delivered again with x-delivery-count one
   * higher; 60 s by default. Keep it above the handler's time.
   */
  public long leaseMs = 60_000;
  /** Bound of the wait for one publish's confirm; 30 s by default. */
  public long publishTimeoutMs = 30_000;
  /** Bound of the connect and of each declaration; 30 s by default. */
  public long connectTimeoutMs = 30_000;
  /**
   * Deliveries that share one database transaction at most (each in a
   * savepoint, one commit), as runtime-go's consumer shares one among a
   * fetch; 64 by default; 1 gives each delivery a transaction of its own.
   */
  public int batchSize = 64;
  /** How long a delivery whose database failed waits before it runs again; 500 ms by default. */
  public long dbRetryMs = 500;

  /**
   * Reports every missing or invalid field at once.
   *
   * @throws IllegalArgumentException naming each problem
   */
  public void validate() {
    List<String> errs = new ArrayList<>();
    if (url == null || url.isBlank()) {
      errs.add("rabbitmq: url is required (amqp://user:password@host:5672/)");
    } else if (!amqpUrl(url)) {
      errs.add("rabbitmq: url \"" + redact(url) + "\" is not an amqp:// or amqps:// URL");
    }
    String p = checkName("prefix", prefix, "/*#");
    if (p != null) {
      errs.add(p);
    }
    if (topology == null) {
      errs.add("rabbitmq: topology is null (use an empty map)");
    } else {
      for (Map.Entry<String, List<String>> e : topology.entrySet()) {
        String t = checkTopic(e.getKey());
        if (t != null) {
          errs.add(t);
        }
        for (String g : e.getValue() == null ? List.<String>of() : e.getValue()) {
          String ge = checkGroup(g);
          if (ge != null) {
            errs.add(ge);
          }
        }
      }
    }
    if (prefetch < 0 || prefetch > 65535) {
      errs.add("rabbitmq: prefetch " + prefetch + " is outside 0..65535 (basic.qos)");
    }
    if (batchSize < 1) {
      errs.add("rabbitmq: batchSize " + batchSize + " must be at least 1 (1: a transaction per delivery)");
    }
    for (Map.Entry<String, Long> d : Map.of("leaseMs", leaseMs, "publishTimeoutMs", publishTimeoutMs,
        "connectTimeoutMs", connectTimeoutMs, "dbRetryMs", dbRetryMs).entrySet()) {
      if (d.getValue() <= 0) {
        errs.add("rabbitmq: " + d.getKey() + " " + d.getValue() + " must be positive");
      }
    }
    if (!errs.isEmpty()) {
      throw new IllegalArgumentException(String.join("; ", errs));
    }
  }

  /** The qos the loop asks for: prefetch, or batchSize when prefetch is 0. */
  int effectivePrefetch() {
    return Math.min(Math.max(prefetch > 0 ? prefetch : batchSize, 1), 65535);
  }

  /** Null when name is a legal topic (a routing key of the topic exchange: no '*' or '#'), else why not. */
  static String checkTopic(String topic) {
    return checkName("topic", topic, "*#");
  }

  /** Null when name is a legal group (one '/'-separated part of a queue name), else why not. */
  static String checkGroup(String group) {
    return checkName("group", group, "/");
  }

  private static String checkName(String what, String s, String forbidden) {
    if (s == null || s.isEmpty()) {
      return "rabbitmq: " + what + " is empty";
    }
    if (s.getBytes(java.nio.charset.StandardCharsets.UTF_8).length > 200) {
      return "rabbitmq: " + what + " \"" + s.substring(0, 20) + "…\" is longer than 200 bytes (queue names are at most 255)";
    }
    for (char c : forbidden.toCharArray()) {
      if (s.indexOf(c) >= 0) {
        return "rabbitmq: " + what + " \"" + s + "\" contains one of \"" + forbidden + "\"";
      }
    }
    return null;
  }

  private static boolean amqpUrl(String u) {
    try {
      URI x = new URI(u);
      return ("amqp".equals(x.getScheme()) || "amqps".equals(x.getScheme())) && x.getHost() != null;
    } catch (URISyntaxException e) {
      return false;
    }
  }

  /** u without its password, for messages. */
  static String redact(String u) {
    try {
      URI x = new URI(u);
      String ui = x.getUserInfo();
      if (ui == null || !ui.contains(":")) {
        return u;
      }
      return new URI(x.getScheme(), ui.substring(0, ui.indexOf(':')) + ":xxxxx", x.getHost(), x.getPort(),
          x.getPath(), x.getQuery(), x.getFragment()).toString();
    } catch (URISyntaxException e) {
      return "(unparsable URL)";
    }
  }
}
