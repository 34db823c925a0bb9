package io.msgcontract.kafka;

import com.google.protobuf.ByteString;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.InvalidProtocolBufferException;
import io.msgcontract.support.Envelopes;
import io.msgcontract.support.EventSpec;
import io.msgcontract.v1.Envelope;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;

/**
 * The Confluent wire format of event records, as runtime-go's kafka
 * transport writes it (docs/DESIGN.md): value = frame(schema id of the
 * event's subject, the payload message's index, the payload), header
 * msgcontract.envelope = the envelope without its payload.
 */
final class Wire {
  /** The header holding the envelope without its payload. */
  static final String HEADER_ENVELOPE = "msgcontract.envelope";
  /** The content type of a binary protobuf payload, the only one that can be framed. */
  static final String PROTO = "application/protobuf";

  private final SchemaRegistry registry;
  private final Map<String, List<Integer>> indexes = new ConcurrentHashMap<>(); // topic \0 event type -> index

  Wire(SchemaRegistry registry) {
    this.registry = registry;
  }

  SchemaRegistry registry() {
    return registry;
  }

  /** Makes spec's payload message known, so its events can be framed. */
  void describe(EventSpec<?> spec) {
    indexes.put(spec.topic() + "\0" + spec.eventType(), messageIndex(spec.defaultInstance().getDescriptorForType()));
  }

  /** The message's path in its file: [i] for the i-th top-level message, nested messages append their index. */
  static List<Integer> messageIndex(Descriptor d) {
    List<Integer> path = new ArrayList<>();
    for (Descriptor x = d; x != null; x = x.getContainingType()) {
      path.add(0, x.getIndex());
    }
    return path;
  }

  /** The subject of env's schema: its schema_subject, else the topic's "-value" subject. */
  static String subject(Envelope env, String topic) {
    return env.getSchemaSubject().isEmpty() ? topic + "-value" : env.getSchemaSubject();
  }

  /** A framed record's value and its envelope header. */
  record Framed(byte[] value, Header header) {}

  /**
   * Frames env, published on topic (the user's topic, without the namespace).
   *
   * @throws KafkaRuntimeException when the payload is not binary protobuf, its event is not described, or
   *     the registry has no id for its subject
   */
  Framed frame(String topic, Envelope env) {
    if (!env.getContentType().isEmpty() && !env.getContentType().equals(PROTO)) {
      throw new KafkaRuntimeException("kafka: the Confluent wire format needs a binary protobuf payload, not "
          + env.getContentType(), null);
    }
    List<Integer> idx = indexes.get(topic + "\0" + env.getEventType());
    if (idx == null) {
      throw new KafkaRuntimeException("kafka: event " + env.getEventType() + " on topic " + topic
          + " is not described: the Confluent wire format needs its message (KafkaPublisher.describe)", null);
    }
    int id = registry.id(subject(env, topic), env.getSchemaVersion());
    return new Framed(ConfluentFraming.frame(id, idx, env.getPayload().toByteArray()),
        new RecordHeader(HEADER_ENVELOPE, header(env)));
  }

  /** The msgcontract.envelope header of env: the envelope without its payload, binary protobuf. */
  static byte[] header(Envelope env) {
    return Envelopes.encode(env.toBuilder().clearPayload().build());
  }

  /** The envelope of a header's envelope and a frame's payload (content type binary protobuf if unset). */
  static Envelope join(Envelope head, byte[] payload) {
    Envelope.Builder b = head.toBuilder().setPayload(ByteString.copyFrom(payload));
    if (b.getContentType().isEmpty()) {
      b.setContentType(PROTO);
    }
    return b.build();
  }

  /** A framed value: its first byte is the magic 0, which no encoded envelope starts with. */
  static boolean isFramed(byte[] value) {
    return value != null && value.length > 0 && value[0] == ConfluentFraming.MAGIC;
  }

  /** A record the check turned down: dead-lettered with reason schema; env is the header's, or null. */
  static final class SchemaException extends Exception {
    private static final long serialVersionUID = 1L;
    final transient Envelope env;

    SchemaException(String message, Envelope env) {
      super("schema: " + message);
      this.env = env;
    }
  }

  /**
   * Joins a framed record back into its envelope, encoded, after checking that the frame's id belongs to
   * the event's subject. An envelope that names no subject or no version is given the subject and the
   * version the id is registered as (the check's answer), so handlers and dead letters name the schema the
   * payload was written with; a version the producer named is kept.
   *
   * @param value the record value, framed
   * @param header the msgcontract.envelope header's value, or null
   * @param topic the user's topic the record came from
   * @throws SchemaException when the record is at fault: a bad frame, no header, a foreign or refused id
   * @throws SchemaRegistry.UnavailableException when the registry could not be asked
   */
  static byte[] unframe(SchemaRegistry registry, byte[] value, byte[] header, String topic)
      throws SchemaException {
    if (registry == null) {
      throw new SchemaException("a Confluent-framed record, and KafkaConfig.registryUrl is not set", null);
    }
    ConfluentFraming.Frame f;
    try {
      f = ConfluentFraming.parse(value);
    } catch (IllegalArgumentException e) {
      throw new SchemaException(e.getMessage(), null);
    }
    if (header == null) {
      throw new SchemaException("no " + HEADER_ENVELOPE + " header: the biz_key and event type are the "
          + "producer's to set", null);
    }
    Envelope env;
    try {
      env = Envelope.parseFrom(header);
    } catch (InvalidProtocolBufferException e) {
      throw new SchemaException(HEADER_ENVELOPE + " header: " + e.getMessage(), null);
    }
    String subject = subject(env, topic);
    int version;
    try {
      version = registry.checkSubject(f.schemaId(), subject);
    } catch (SchemaRegistry.RefusedException e) {
      throw new SchemaException(e.getMessage(), env);
    }
    Envelope.Builder b = env.toBuilder();
    if (b.getSchemaSubject().isEmpty()) {
      b.setSchemaSubject(subject);
    }
    if (b.getSchemaVersion() == 0) {
      b.setSchemaVersion(version);
    }
    return Envelopes.encode(join(b.build(), f.payload()));
  }
}
