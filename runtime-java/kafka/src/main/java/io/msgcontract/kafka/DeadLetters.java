package io.msgcontract.kafka;

import io.msgcontract.support.JsonStrings;
import io.msgcontract.v1.Envelope;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;

/**
 * Dead-letter records in runtime-go's layout: value = the delivered bytes,
 * untouched; key = the biz_key; header msgcontract.dlq = the metadata as
 * JSON (runtime-go's dlq.Record without id, envelope and replay state);
 * header msgcontract.topic = the original topic. `msgcontract dlq ... --kafka`
 * reads them.
 */
final class DeadLetters {
  private DeadLetters() {}

  /** One dead letter's metadata; env is null when the envelope did not decode. */
  record Meta(String topic, String group, String handler, Envelope env, String reason, int code, String error,
      int attempts, long nowMs) {}

  static ProducerRecord<byte[], byte[]> record(String dlqTopic, Meta m, byte[] delivered) {
    String bizKey = m.env() == null ? "" : m.env().getBizKey();
    List<Header> headers = List.of(new RecordHeader(Topics.HEADER_DLQ, json(m).getBytes(StandardCharsets.UTF_8)),
        new RecordHeader(Topics.HEADER_TOPIC, m.topic().getBytes(StandardCharsets.UTF_8)));
    return KafkaPublisher.record(dlqTopic, bizKey, delivered, headers);
  }

  /** The metadata JSON, with the field names of Go's dlq.Record. */
  static String json(Meta m) {
    Envelope env = m.env();
    long firstFailed = env != null && env.getFirstFailedAt() > 0 ? env.getFirstFailedAt() : m.nowMs();
    StringBuilder b = new StringBuilder(256).append('{');
    field(b, "topic", m.topic()).append(',');
    field(b, "group", m.group()).append(',');
    field(b, "handler", m.handler()).append(',');
    field(b, "event_type", env == null ? "" : env.getEventType()).append(',');
    field(b, "biz_key", env == null ? "" : env.getBizKey()).append(',');
    field(b, "message_id", env == null ? "" : env.getMessageId()).append(',');
    b.append("\"envelope\":null,");
    field(b, "reason", m.reason()).append(',');
    b.append("\"code\":").append(m.code()).append(',');
    field(b, "error", m.error()).append(',');
    b.append("\"attempts\":").append(m.attempts()).append(',');
    field(b, "first_failed_at", Instant.ofEpochMilli(firstFailed).toString()).append(',');
    field(b, "last_failed_at", Instant.ofEpochMilli(m.nowMs()).toString()).append(',');
    field(b, "dead_at", Instant.ofEpochMilli(m.nowMs()).toString()).append(',');
    b.append("\"replay_count\":0}");
    return b.toString();
  }

  private static StringBuilder field(StringBuilder b, String name, String value) {
    return JsonStrings.quote(JsonStrings.quote(b, name).append(':'), value == null ? "" : value);
  }
}
