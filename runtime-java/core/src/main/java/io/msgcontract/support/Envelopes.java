package io.msgcontract.support;

import com.google.protobuf.ByteString;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import io.msgcontract.v1.Envelope;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;

/**
 * Builds, encodes and decodes msgcontract envelopes. Binary protobuf is the
 * wire form; JSON, always with proto (snake_case) field names, is for
 * humans, logs and the dlq tooling. The JSON methods need
 * com.google.protobuf:protobuf-java-util on the classpath (an optional dependency of this
 * runtime); everything else needs protobuf-java only.
 */
public final class Envelopes {
  /** Content type of a binary protobuf payload. */
  public static final String CONTENT_TYPE_PROTO = "application/protobuf";
  /** Content type of a proto JSON payload. */
  public static final String CONTENT_TYPE_JSON = "application/json";

  private static final SecureRandom RANDOM = new SecureRandom();
  private static final char[] HEX = "0123456789abcdef".toCharArray();

  private Envelopes() {}

  /**
   * Wraps message in a new envelope with a binary payload: a random message
   * id, its rendered biz_key, the event type and topic, and occurredAtMs
   * (UTC epoch milliseconds).
   */
  public static <M extends Message> Envelope newEnvelope(EventSpec<M> spec, M message, long occurredAtMs)
      throws BizKeyException {
    return builder(spec, message, occurredAtMs)
        .setContentType(CONTENT_TYPE_PROTO)
        .setPayload(message.toByteString())
        .build();
  }

  /** Like {@link #newEnvelope} with the payload in proto JSON with proto field names. */
  public static <M extends Message> Envelope newJsonEnvelope(EventSpec<M> spec, M message, long occurredAtMs)
      throws BizKeyException {
    return builder(spec, message, occurredAtMs)
        .setContentType(CONTENT_TYPE_JSON)
        .setPayload(ByteString.copyFromUtf8(toJson(message)))
        .build();
  }

  /**
   * Returns a builder holding everything but the payload, for producers that
   * set schema subject, version or trace context before building.
   */
  public static <M extends Message> Envelope.Builder builder(EventSpec<M> spec, M message, long occurredAtMs)
      throws BizKeyException {
    return Envelope.newBuilder()
        .setMessageId(newMessageId())
        .setBizKey(spec.bizKey(message))
        .setEventType(spec.eventType())
        .setTopic(spec.topic())
        .setOccurredAt(occurredAtMs);
  }

  /** Returns 32 random lower-case hex digits. */
  public static String newMessageId() {
    byte[] b = new byte[16];
    RANDOM.nextBytes(b);
    StringBuilder s = new StringBuilder(32);
    for (byte x : b) {
      s.append(HEX[(x >> 4) & 15]).append(HEX[x & 15]);
    }
    return s.toString();
  }

  /** Encodes env as binary protobuf. */
  public static byte[] encode(Envelope env) {
    return env.toByteArray();
  }

  /**
   * Decodes a binary envelope. An envelope without biz_key or event_type is
   * rejected too: without them a consumer can neither deduplicate nor route it.
   */
  public static Envelope decode(byte[] body) throws DecodeException {
    Envelope env;
    try {
      env = Envelope.parseFrom(body);
    } catch (InvalidProtocolBufferException e) {
      throw new DecodeException("envelope: cannot decode", e);
    }
    return check(env);
  }

  /** Encodes env as proto JSON with proto field names. */
  public static String encodeJson(Envelope env) {
    return toJson(env);
  }

  /** Decodes a proto JSON envelope; both field-name forms are accepted. */
  public static Envelope decodeJson(String json) throws DecodeException {
    Envelope.Builder b = Envelope.newBuilder();
    try {
      ProtoJson.merge(json, b);
    } catch (InvalidProtocolBufferException e) {
      throw new DecodeException("envelope: cannot decode JSON", e);
    }
    return check(b.build());
  }

  /** Decodes env's payload as spec's message, by its content type (binary when unset). */
  public static <M extends Message> M payload(EventSpec<M> spec, Envelope env) throws DecodeException {
    String ct = env.getContentType();
    if (ct.isEmpty() || ct.equals(CONTENT_TYPE_PROTO)) {
      return spec.parseBinary(env.getPayload().toByteArray());
    }
    if (ct.equals(CONTENT_TYPE_JSON)) {
      return spec.parseJson(env.getPayload().toString(StandardCharsets.UTF_8));
    }
    throw new DecodeException("envelope: unknown content type \"" + ct + "\"");
  }

  /** Prints m as proto JSON with proto (snake_case) field names. */
  public static String toJson(Message m) {
    try {
      return ProtoJson.print(m);
    } catch (InvalidProtocolBufferException e) {
      // Only messages holding Any of an unknown type fail to print.
      throw new IllegalArgumentException("cannot print " + m.getDescriptorForType().getFullName() + " as JSON", e);
    }
  }

  private static Envelope check(Envelope env) throws DecodeException {
    if (env.getBizKey().isEmpty() || env.getEventType().isEmpty()) {
      throw new DecodeException("envelope: missing biz_key or event_type");
    }
    return env;
  }
}
