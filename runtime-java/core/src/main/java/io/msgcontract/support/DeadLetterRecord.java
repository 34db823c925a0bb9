package io.msgcontract.support;

import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.Base64;
import java.util.Map;

/**
 * One dead-letter record, the fields of runtime-go's dlq.Record with its JSON
 * names: what the broker modules store in their dead-letter queues or topics
 * (docs/rabbitmq.md and docs/rocketmq.md, "Dead letters"), so Go, Java and
 * Python stores and {@code msgcontract dlq} read each other's.
 *
 * @param id the record id, "%016x-xxxxxxxx" (store time in µs since the epoch, 8 random hex digits)
 * @param topic the topic the message was published to; a replay returns it there
 * @param group the group that gave up on it; only this group sees a replay
 * @param handler the handler name; "" for decode failures
 * @param eventType the envelope's event type, "" when it did not decode
 * @param bizKey the envelope's biz_key, "" when it did not decode
 * @param messageId the envelope's message_id, "" when it did not decode
 * @param envelope the delivered bytes, untouched
 * @param reason decode, non_retryable, retries_exhausted, no_handler or schema
 * @param code the last failure's error code, 0 when none
 * @param error the last failure's message
 * @param attempts how many times the handler ran, 0 when it never did
 * @param firstFailedAt the first failure, null when unknown
 * @param lastFailedAt the last failure, null when unknown
 * @param deadAt when the record was written, null when unknown
 * @param replayCount how many times it was replayed
 * @param lastReplayedAt the last replay, null when never
 */
public record DeadLetterRecord(String id, String topic, String group, String handler, String eventType,
    String bizKey, String messageId, byte[] envelope, String reason, int code, String error, int attempts,
    Instant firstFailedAt, Instant lastFailedAt, Instant deadAt, int replayCount, Instant lastReplayedAt) {

  /** This record under another id. */
  public DeadLetterRecord withId(String newId) {
    return new DeadLetterRecord(newId, topic, group, handler, eventType, bizKey, messageId, envelope, reason, code,
        error, attempts, firstFailedAt, lastFailedAt, deadAt, replayCount, lastReplayedAt);
  }

  /** This record replayed once more at 'at'. */
  public DeadLetterRecord replayed(Instant at) {
    return new DeadLetterRecord(id, topic, group, handler, eventType, bizKey, messageId, envelope, reason, code,
        error, attempts, firstFailedAt, lastFailedAt, deadAt, replayCount + 1, at);
  }

  /** The record as JSON, with the field names of Go's dlq.Record (zero times left out, as Go's omitzero does). */
  public String toJson() {
    StringBuilder b = new StringBuilder(512).append('{');
    if (id != null && !id.isEmpty()) {
      str(b, "id", id).append(',');
    }
    str(b, "topic", topic).append(',');
    str(b, "group", group).append(',');
    str(b, "handler", handler).append(',');
    str(b, "event_type", eventType).append(',');
    str(b, "biz_key", bizKey).append(',');
    str(b, "message_id", messageId).append(',');
    JsonStrings.quote(b, "envelope").append(':');
    if (envelope == null) {
      b.append("null");
    } else {
      JsonStrings.quote(b, Base64.getEncoder().encodeToString(envelope));
    }
    b.append(',');
    str(b, "reason", reason).append(',');
    b.append("\"code\":").append(code).append(',');
    str(b, "error", error).append(',');
    b.append("\"attempts\":").append(attempts).append(',');
    time(b, "first_failed_at", firstFailedAt);
    time(b, "last_failed_at", lastFailedAt);
    time(b, "dead_at", deadAt);
    b.append("\"replay_count\":").append(replayCount);
    if (lastReplayedAt != null) {
      b.append(',');
      JsonStrings.quote(JsonStrings.quote(b, "last_replayed_at").append(':'), lastReplayedAt.toString());
    }
    return b.append('}').toString();
  }

  private static StringBuilder str(StringBuilder b, String name, String value) {
    return JsonStrings.quote(JsonStrings.quote(b, name).append(':'), value == null ? "" : value);
  }

  private static void time(StringBuilder b, String name, Instant t) {
    if (t != null) {
      JsonStrings.quote(JsonStrings.quote(b, name).append(':'), t.toString()).append(',');
    }
  }

  /**
   * Parses a record's JSON as Go, Java or Python wrote it; an absent id is "".
   *
   * @throws IllegalArgumentException when it is not a JSON dlq.Record
   */
  public static DeadLetterRecord fromJson(String json) {
    if (!(Json.parse(json) instanceof Map<?, ?> m)) {
      throw new IllegalArgumentException("not a JSON object");
    }
    String env = s(m, "envelope");
    return new DeadLetterRecord(s(m, "id"), s(m, "topic"), s(m, "group"), s(m, "handler"), s(m, "event_type"),
        s(m, "biz_key"), s(m, "message_id"), m.get("envelope") == null ? null : Base64.getDecoder().decode(env),
        s(m, "reason"), (int) n(m, "code"), s(m, "error"), (int) n(m, "attempts"), t(m, "first_failed_at"),
        t(m, "last_failed_at"), t(m, "dead_at"), (int) n(m, "replay_count"), t(m, "last_replayed_at"));
  }

  private static String s(Map<?, ?> m, String k) {
    Object v = m.get(k);
    if (v != null && !(v instanceof String)) {
      throw new IllegalArgumentException("field " + k + " is not a string");
    }
    return v == null ? "" : (String) v;
  }

  private static long n(Map<?, ?> m, String k) {
    Object v = m.get(k);
    if (v == null) {
      return 0;
    }
    if (!(v instanceof Long l)) {
      throw new IllegalArgumentException("field " + k + " is not an integer");
    }
    return l;
  }

  private static Instant t(Map<?, ?> m, String k) {
    String v = s(m, k);
    if (v.isEmpty() || v.startsWith("0001-01-01T00:00:00")) {
      return null;
    }
    try {
      return OffsetDateTime.parse(v).toInstant();
    } catch (DateTimeParseException e) {
      throw new IllegalArgumentException("field " + k + " is not an RFC 3339 time: " + v, e);
    }
  }
}
