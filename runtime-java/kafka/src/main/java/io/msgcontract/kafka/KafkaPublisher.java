package io.msgcontract.kafka;

import io.msgcontract.support.DecodeException;
import io.msgcontract.support.Envelopes;
import io.msgcontract.support.EventSpec;
import io.msgcontract.v1.Envelope;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Publishes envelopes as runtime-go's kafka transport does: an idempotent
 * producer with acks=all, the record key is the biz_key (the default
 * partitioner hashes it with murmur2, as franz-go is configured to, so one
 * key's events land in one partition whichever language produced them), the
 * value is the encoded envelope. Every publish waits for the broker's
 * acknowledgement. With {@link KafkaConfig#registryUrl} set, {@link #publish}
 * writes the Confluent wire format instead (value = the framed payload, header
 * msgcontract.envelope = the envelope without its payload); the events must be
 * made known with {@link #describe}. Safe for concurrent use.
 */
public final class KafkaPublisher implements AutoCloseable {
  private final KafkaConfig cfg;
  private final Topics topics;
  private final KafkaProducer<byte[], byte[]> producer;
  private final Wire wire; // null without a registry

  /**
   * Validates cfg and creates the producer.
   *
   * @param cfg the cluster; its namespace prefixes every topic
   */
  public KafkaPublisher(KafkaConfig cfg) {
    cfg.validate();
    this.cfg = cfg;
    this.topics = new Topics(cfg);
    Properties p = cfg.base();
    p.put("acks", "all");
    p.put("enable.idempotence", "true");
    p.put("max.in.flight.requests.per.connection", "5");
    p.put("linger.ms", "1");
    p.put("delivery.timeout.ms", Long.toString(Math.max(cfg.publishTimeoutMs, cfg.connectTimeoutMs + 1)));
    p.put("max.block.ms", Long.toString(cfg.connectTimeoutMs));
    this.producer = new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer());
    this.wire = cfg.registryUrl.isEmpty() ? null
        : new Wire(new SchemaRegistry(cfg.registryUrl, Duration.ofMillis(cfg.connectTimeoutMs)));
  }

  /**
   * Makes the events' payload messages known (their index in the proto file is part of the Confluent
   * frame); needed for every event published with a registry, a no-op without one.
   */
  public KafkaPublisher describe(EventSpec<?>... specs) {
    if (wire != null) {
      for (EventSpec<?> s : specs) {
        wire.describe(s);
      }
    }
    return this;
  }

  /** Publishes env to its topic (env.topic) and waits for the broker. */
  public void publish(Envelope env) {
    publish(env.getTopic(), env.getBizKey(), Envelopes.encode(env));
  }

  /**
   * Publishes an encoded envelope to topic (under the namespace) with key bizKey and waits; framed when a
   * registry is configured.
   */
  public void publish(String topic, String bizKey, byte[] body) {
    String name = topics.topic(topic);
    topics.ensure(Map.of(name, Map.of()));
    if (wire == null) {
      send(new ProducerRecord<>(name, null, bizKey.getBytes(StandardCharsets.UTF_8), body));
      return;
    }
    Envelope env;
    try {
      env = Envelopes.decode(body);
    } catch (DecodeException e) {
      throw new KafkaRuntimeException("kafka: publish to " + name + ": " + e.getMessage(), e);
    }
    Wire.Framed f = wire.frame(topic, env);
    send(record(name, bizKey, f.value(), List.of(f.header())));
  }

  /** The registry client, or null when no registryUrl is configured. */
  SchemaRegistry registry() {
    return wire == null ? null : wire.registry();
  }

  /** Publishes the records, all in flight at once, and waits for every acknowledgement. */
  void sendAll(List<ProducerRecord<byte[], byte[]>> recs) {
    Future<?>[] fs = new Future<?>[recs.size()];
    for (int i = 0; i < fs.length; i++) {
      fs[i] = producer.send(recs.get(i));
    }
    for (int i = 0; i < fs.length; i++) {
      await(fs[i], recs.get(i).topic());
    }
  }

  /** Publishes one record and waits for its acknowledgement. */
  RecordMetadata send(ProducerRecord<byte[], byte[]> rec) {
    return await(producer.send(rec), rec.topic());
  }

  static ProducerRecord<byte[], byte[]> record(String topic, String key, byte[] value, List<Header> headers) {
    return new ProducerRecord<>(topic, null, key.getBytes(StandardCharsets.UTF_8), value, headers);
  }

  private RecordMetadata await(Future<?> f, String topic) {
    try {
      return (RecordMetadata) f.get();
    } catch (ExecutionException e) {
      throw new KafkaRuntimeException("kafka: publish to " + topic + ": " + e.getCause(), e.getCause());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new KafkaRuntimeException("kafka: publish to " + topic + ": interrupted", e);
    }
  }

  Topics topics() {
    return topics;
  }

  KafkaConfig config() {
    return cfg;
  }

  @Override
  public void close() {
    producer.close();
    topics.close();
  }
}
