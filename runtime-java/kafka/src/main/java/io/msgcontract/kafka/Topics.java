package io.msgcontract.kafka;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.errors.TopicExistsException;

/**
 * Topic names and topic creation, as runtime-go's kafka transport has them.
 * Under the namespace, a topic T uses T (events), T.retry.&lt;group&gt; (the
 * group's retry copies), T.dlq (dead letters) and T.dlq.ops (replay and purge
 * markers, compacted).
 */
final class Topics implements AutoCloseable {
  /** Header naming the original topic of a retry or replay record. */
  static final String HEADER_TOPIC = "msgcontract.topic";
  /** Header holding a dead-letter record's metadata as JSON. */
  static final String HEADER_DLQ = "msgcontract.dlq";

  private final KafkaConfig cfg;
  private final Admin admin;
  private final Set<String> known = ConcurrentHashMap.newKeySet();

  Topics(KafkaConfig cfg) {
    this.cfg = cfg;
    this.admin = Admin.create(cfg.base());
  }

  static boolean legalName(String s) {
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (!(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_'
          || c == '-')) {
        return false;
      }
    }
    return true;
  }

  /** Maps s to a legal topic name fragment, character by character. */
  static String sanitize(String s) {
    StringBuilder b = new StringBuilder(s.length());
    s.codePoints().forEach(c -> b.append(c < 128 && legalName(String.valueOf((char) c)) ? (char) c : '_'));
    return b.toString();
  }

  String topic(String topic) {
    return cfg.namespace + topic;
  }

  String retry(String group, String topic) {
    return retryName(cfg.namespace, group, topic);
  }

  String dlq(String topic) {
    return dlqName(cfg.namespace, topic);
  }

  static String retryName(String namespace, String group, String topic) {
    return namespace + topic + ".retry." + sanitize(group);
  }

  static String dlqName(String namespace, String topic) {
    return namespace + topic + ".dlq";
  }

  String ops(String topic) {
    return cfg.namespace + topic + ".dlq.ops";
  }

  String group(String group) {
    return cfg.namespace + group;
  }

  /** Every topic a subscription of group on topic needs, with their configs. */
  Map<String, Map<String, String>> subscriptionTopics(String group, String topic) {
    Map<String, Map<String, String>> m = new HashMap<>();
    m.put(topic(topic), Map.of());
    m.put(retry(group, topic), Map.of());
    m.put(dlq(topic), Map.of("retention.ms", Long.toString(cfg.dlqRetentionMs > 0 ? cfg.dlqRetentionMs : -1)));
    m.put(ops(topic), Map.of("cleanup.policy", "compact"));
    return m;
  }

  /**
   * Checks that the topics exist, creating missing ones when createTopics is
   * on, within connectTimeoutMs: past it the error names the brokers.
   */
  void ensure(Map<String, Map<String, String>> specs) {
    List<String> missing = new ArrayList<>();
    for (String name : specs.keySet()) {
      if (!known.contains(name)) {
        missing.add(name);
      }
    }
    if (missing.isEmpty()) {
      return;
    }
    Set<String> existing;
    try {
      existing = admin.listTopics().names().get(cfg.connectTimeoutMs, TimeUnit.MILLISECONDS);
    } catch (TimeoutException | ExecutionException e) {
      throw unreachable(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new KafkaRuntimeException("kafka: interrupted", e);
    }
    List<NewTopic> create = new ArrayList<>();
    for (String name : missing) {
      if (existing.contains(name)) {
        known.add(name);
      } else if (!cfg.createTopics) {
        throw new KafkaRuntimeException("kafka: topic " + name + " does not exist on " + cfg.brokers
            + ": create it, or leave createTopics on", null);
      } else {
        create.add(new NewTopic(name, Optional.of(cfg.partitions), Optional.of(cfg.replicationFactor))
            .configs(specs.get(name)));
      }
    }
    if (create.isEmpty()) {
      return;
    }
    var res = admin.createTopics(create).values();
    for (NewTopic t : create) {
      try {
        res.get(t.name()).get(cfg.connectTimeoutMs, TimeUnit.MILLISECONDS);
      } catch (ExecutionException e) {
        if (!(e.getCause() instanceof TopicExistsException)) {
          throw new KafkaRuntimeException("kafka: create topic " + t.name() + ": " + e.getCause().getMessage(), e);
        }
      } catch (TimeoutException e) {
        throw unreachable(e);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new KafkaRuntimeException("kafka: interrupted", e);
      }
      known.add(t.name());
    }
  }

  KafkaRuntimeException unreachable(Exception e) {
    Throwable c = e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e;
    return new KafkaRuntimeException("kafka: broker " + cfg.brokers + " unreachable after " + cfg.connectTimeoutMs
        + "ms: " + c + " (is the cluster up, and are brokers and the TLS/SASL properties right?)", e);
  }

  Admin admin() {
    return admin;
  }

  @Override
  public void close() {
    admin.close(Duration.ofMillis(cfg.connectTimeoutMs));
  }
}
