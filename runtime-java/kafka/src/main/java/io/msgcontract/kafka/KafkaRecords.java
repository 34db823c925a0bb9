package io.msgcontract.kafka;

import io.msgcontract.support.DecodeException;
import io.msgcontract.support.Decision;
import io.msgcontract.support.Envelopes;
import io.msgcontract.v1.Envelope;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.internals.RecordHeader;

/**
 * The retry and dead-letter records of a {@link Decision}, in runtime-go's
 * layout, for code that runs the generated consumer in a listener of its own
 * (Spring Kafka's {@code @KafkaListener}, see docs/runtime-java.md, "Spring Kafka") instead of
 * {@link KafkaConsumerLoop}, which uses them too. Send them with an
 * idempotent, acks=all producer and wait for the acknowledgement before
 * acknowledging the delivery, and pass {@link #deliveryId} to {@code
 * Consumer.process(tx, rec.value(), deliveryId)}, so that a retry published
 * before a crash and published again after it does not fork the message's
 * retry chain.
 */
public final class KafkaRecords {
  private KafkaRecords() {}

  /**
   * The delivery id of rec: "&lt;topic&gt;/&lt;partition&gt;/&lt;offset&gt;", the topic as the
   * broker names it (namespace included; the retry topic for a retry copy), as
   * runtime-go's kafka transport names a delivery. It names the stored copy and
   * is the same on each of its redeliveries: the retry chain's delivery id
   * ({@code io.msgcontract.support.RetryChain}), shared with Go and Python
   * members of the group.
   *
   * @param rec a consumed record
   * @return its delivery id
   */
  public static String deliveryId(ConsumerRecord<?, ?> rec) {
    return rec.topic() + "/" + rec.partition() + "/" + rec.offset();
  }

  /**
   * The record of {@link Decision.Retry}: to topic's retry topic for group
   * ("&lt;namespace&gt;&lt;topic&gt;.retry.&lt;group&gt;"), key = biz_key, value = the next envelope, header
   * msgcontract.topic = topic.
   *
   * @param namespace the topic prefix ("" for none)
   * @param group the consumer group, as given to the loop (without the namespace)
   * @param topic the topic the delivery came from, as the contract names it
   * @param retry the decision
   */
  public static ProducerRecord<byte[], byte[]> retry(String namespace, String group, String topic,
      Decision.Retry retry) {
    Envelope next = retry.nextEnvelope();
    return KafkaPublisher.record(Topics.retryName(namespace, group, topic), next.getBizKey(), Envelopes.encode(next),
        List.of(new RecordHeader(Topics.HEADER_TOPIC, topic.getBytes(StandardCharsets.UTF_8))));
  }

  /**
   * The record of {@link Decision.DeadLetter}: to "&lt;namespace&gt;&lt;topic&gt;.dlq", value = the
   * delivered bytes, key = biz_key, header msgcontract.dlq = the metadata that
   * {@code msgcontract dlq list --kafka} shows.
   *
   * @param namespace the topic prefix ("" for none)
   * @param group the consumer group (without the namespace)
   * @param topic the topic the delivery came from, as the contract names it
   * @param handler the handler name
   * @param delivered the delivered bytes, untouched
   * @param dead the decision
   * @param nowMs the time of death, UTC epoch milliseconds
   */
  public static ProducerRecord<byte[], byte[]> deadLetter(String namespace, String group, String topic,
      String handler, byte[] delivered, Decision.DeadLetter dead, long nowMs) {
    Envelope env;
    try {
      env = Envelopes.decode(delivered);
    } catch (DecodeException e) {
      env = null;
    }
    return DeadLetters.record(Topics.dlqName(namespace, topic), new DeadLetters.Meta(topic, group, handler, env,
        dead.reason(), dead.code(), dead.error(), dead.attempts(), nowMs), delivered);
  }
}
