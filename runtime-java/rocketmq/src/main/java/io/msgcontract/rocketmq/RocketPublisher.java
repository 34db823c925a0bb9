package io.msgcontract.rocketmq;

import io.msgcontract.support.DeadLetterRecord;
import io.msgcontract.support.DecodeException;
import io.msgcontract.support.Envelopes;
import io.msgcontract.v1.Envelope;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.LongSupplier;
import org.apache.rocketmq.client.apis.ClientConfiguration;
import org.apache.rocketmq.client.apis.ClientException;
import org.apache.rocketmq.client.apis.ClientServiceProvider;
import org.apache.rocketmq.client.apis.message.Message;
import org.apache.rocketmq.client.apis.message.MessageBuilder;
import org.apache.rocketmq.client.apis.producer.Producer;

/**
 * Sends msgcontract's messages to RocketMQ through the proxy with RocketMQ's
 * 5.x client, as runtime-go's rocketmq transport does (docs/rocketmq.md):
 * the body is the envelope; the user property MSGCONTRACT_TOPIC names the
 * msgcontract topic; the keys are the biz_key and the message_id (so {@code
 * mqadmin queryMsgByKey} finds a payment's messages); the tag is the event
 * type. Retry and deferred copies go to the group's retry topic as timer
 * messages, with MSGCONTRACT_NOT_BEFORE; dead-letter records to the
 * dead-letter topic as JSON. Thread-safe; one per process is enough.
 *
 * <p>Unlike runtime-go's members, which pick a queue by the biz_key (the
 * remoting client's sharding key), the 5.x client spreads normal messages
 * over the queues: per-key order needs FIFO topics ({@link
 * RocketConfig#fifoTopics}), whose messages this publisher gives the biz_key
 * as their message group, and FIFO groups ({@link RocketConfig#fifoGroups}).
 */
public final class RocketPublisher implements AutoCloseable {
  /** How far ahead a timer may be due: RocketMQ's timerMaxDelaySec defaults to three days. */
  static final long MAX_TIMER_MS = 72L * 3600 * 1000 - 60_000;
  /** The longest message group the proxy takes, in UTF-8 bytes: under its maxMessageGroupSize, 64. */
  static final int MAX_MESSAGE_GROUP_BYTES = 63;
  /** What a message group that stands for a key the proxy would refuse starts with, before the key's SHA-256. */
  static final String HASHED_GROUP_PREFIX = "sha256:";

  private final RocketConfig cfg;
  private final LongSupplier clock;
  private final ClientServiceProvider provider;
  private final ClientConfiguration clientConfig;
  private final Producer producer;

  /**
   * Returns a publisher connected to cfg's proxy.
   *
   * @throws RocketRuntimeException when the proxy cannot be reached
   */
  public RocketPublisher(RocketConfig cfg) {
    this(cfg, System::currentTimeMillis);
  }

  /** Like {@link #RocketPublisher(RocketConfig)} with a clock (UTC epoch ms). */
  public RocketPublisher(RocketConfig cfg, LongSupplier clock) {
    cfg.validate();
    this.cfg = cfg;
    this.clock = clock;
    this.provider = ClientServiceProvider.loadService();
    this.clientConfig = clientConfiguration(cfg);
    try {
      this.producer = provider.newProducerBuilder().setClientConfiguration(clientConfig).build();
    } catch (ClientException e) {
      throw startFailure(cfg, e);
    }
  }

  /** The client's configuration of cfg: its proxy and request timeout. */
  static ClientConfiguration clientConfiguration(RocketConfig cfg) {
    return ClientConfiguration.newBuilder().setEndpoints(cfg.endpoints)
        .setRequestTimeout(Duration.ofMillis(cfg.requestTimeoutMs)).build();
  }

  /** An exception of a producer that did not start on cfg's proxy, with what to check. */
  static RocketRuntimeException startFailure(RocketConfig cfg, ClientException e) {
    return new RocketRuntimeException("rocketmq: start a producer on the proxy " + cfg.endpoints + ": " + e.getMessage()
        + " (is the proxy running, and is endpoints its gRPC port?)", e);
  }

  /** The config, validated. */
  RocketConfig config() {
    return cfg;
  }

  ClientServiceProvider provider() {
    return provider;
  }

  ClientConfiguration clientConfig() {
    return clientConfig;
  }

  long now() {
    return clock.getAsLong();
  }

  /**
   * Publishes env to msgcontract topic topic and waits for the broker.
   *
   * @throws RocketRuntimeException when the send failed or timed out (the topic does not exist, the proxy is down)
   */
  public void publish(String topic, Envelope env) {
    await(send(eventMessage(provider, cfg, topic, env, Envelopes.encode(env)).build()), cfg.topicName(topic));
  }

  /**
   * Publishes an envelope's bytes to msgcontract topic topic and waits for the
   * broker: core's {@code OutboxRelay.Publisher}, so {@code new
   * OutboxRelay(db, publisher::publish, …)} relays an outbox to RocketMQ.
   *
   * @throws RocketRuntimeException when the bytes are not an envelope, or the send failed
   */
  public void publish(String topic, String bizKey, byte[] envelope) {
    Envelope env;
    try {
      env = Envelopes.decode(envelope);
    } catch (DecodeException e) {
      throw new RocketRuntimeException("rocketmq: the outbox row for " + topic + " (biz_key " + bizKey
          + ") is not an envelope: " + e.getMessage(), e);
    }
    await(send(eventMessage(provider, cfg, topic, env, envelope).build()), cfg.topicName(topic));
  }

  /**
   * Sends body (an envelope, env decoded) to group's retry topic, keeping its
   * msgcontract topic, not to be handled before notBeforeMs (0: at once): a
   * timer message due {@code timerLeadMs} before then, or now when that has
   * passed (the retry topic is a DELAY topic: every copy has a delivery time).
   */
  CompletableFuture<Void> publishCopy(String group, String topic, Envelope env, byte[] body, long notBeforeMs) {
    long now = clock.getAsLong();
    long at = notBeforeMs > 0 ? Math.min(Math.max(notBeforeMs - cfg.timerLeadMs, now), now + MAX_TIMER_MS) : now;
    return send(message(provider, cfg.retryTopic(group), topic, env, body, notBeforeMs).setDeliveryTimestamp(at)
        .build());
  }

  /** Appends r (without id and replay state) to the dead-letter topic, as runtime-go's storeRecord. */
  CompletableFuture<Void> storeRecord(DeadLetterRecord r) {
    DeadLetterRecord bare = new DeadLetterRecord("", r.topic(), r.group(), r.handler(), r.eventType(), r.bizKey(),
        r.messageId(), r.envelope(), r.reason(), r.code(), r.error(), r.attempts(), r.firstFailedAt(),
        r.lastFailedAt(), r.deadAt(), 0, null);
    MessageBuilder b = provider.newMessageBuilder().setTopic(cfg.dlqTopic())
        .setBody(bare.toJson().getBytes(StandardCharsets.UTF_8)).addProperty(RocketConfig.PROP_TOPIC, r.topic());
    if (!r.bizKey().isEmpty()) {
      b.setKeys(keys(r.bizKey(), r.messageId()));
    }
    return send(b.build());
  }

  /** Tests only: sends body as it is to the RocketMQ topic name and waits for the broker. */
  void sendRawForTests(String name, byte[] body) {
    await(send(provider.newMessageBuilder().setTopic(name).setBody(body).build()), name);
  }

  /**
   * The message of env (body, its bytes) for msgcontract topic topic's own
   * RocketMQ topic: {@link #message}, and on a FIFO topic ({@link
   * RocketConfig#fifoTopics}) env's {@link #messageGroup}.
   */
  static MessageBuilder eventMessage(ClientServiceProvider provider, RocketConfig cfg, String topic, Envelope env,
      byte[] body) {
    MessageBuilder b = message(provider, cfg.topicName(topic), topic, env, body, 0);
    if (cfg.isFifoTopic(topic)) {
      b.setMessageGroup(messageGroup(env));
    }
    return b;
  }

  /**
   * The message group of env on a FIFO topic: its biz_key (its message id
   * when the biz_key is empty), so a key's messages share one queue in
   * publish order. A key the proxy would refuse as a group (blank, over
   * {@link #MAX_MESSAGE_GROUP_BYTES} bytes, or with a control character)
   * becomes "sha256:" and the start of its SHA-256 in hex, as the Python
   * member's: still one group per key.
   *
   * @throws IllegalArgumentException when env has neither biz_key nor message id
   */
  static String messageGroup(Envelope env) {
    String key = env.getBizKey().isEmpty() ? env.getMessageId() : env.getBizKey();
    if (key.isEmpty()) {
      throw new IllegalArgumentException("rocketmq: the envelope has neither biz_key nor message id: a FIFO topic's"
          + " message needs a message group (build it with Envelopes.newEnvelope)");
    }
    byte[] b = key.getBytes(StandardCharsets.UTF_8);
    if (!key.isBlank() && b.length <= MAX_MESSAGE_GROUP_BYTES && key.chars().noneMatch(Character::isISOControl)) {
      return key;
    }
    try {
      return HASHED_GROUP_PREFIX + HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(b))
          .substring(0, MAX_MESSAGE_GROUP_BYTES - HASHED_GROUP_PREFIX.length());
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("rocketmq: SHA-256 is missing from this JVM", e); // every JVM has it
    }
  }

  /**
   * The message of env (body, its bytes) for RocketMQ topic name, msgcontract
   * topic topic: MSGCONTRACT_TOPIC, the keys biz_key and message_id, the event
   * type as the tag, and MSGCONTRACT_NOT_BEFORE when notBeforeMs is set.
   */
  static MessageBuilder message(ClientServiceProvider provider, String name, String topic, Envelope env, byte[] body,
      long notBeforeMs) {
    MessageBuilder b = provider.newMessageBuilder().setTopic(name).setBody(body)
        .addProperty(RocketConfig.PROP_TOPIC, topic);
    String[] k = keys(env.getBizKey(), env.getMessageId());
    if (k.length > 0) {
      b.setKeys(k);
    }
    if (!env.getEventType().isEmpty()) {
      b.setTag(env.getEventType());
    }
    if (notBeforeMs > 0) {
      b.addProperty(RocketConfig.PROP_NOT_BEFORE, Long.toString(notBeforeMs));
    }
    return b;
  }

  private static String[] keys(String bizKey, String messageId) {
    List<String> k = new ArrayList<>(2);
    if (!bizKey.isEmpty()) {
      k.add(bizKey);
    }
    if (!messageId.isEmpty()) {
      k.add(messageId);
    }
    return k.toArray(new String[0]);
  }

  private CompletableFuture<Void> send(Message m) {
    return producer.sendAsync(m).thenApply(r -> null);
  }

  private void await(CompletableFuture<Void> f, String name) {
    try {
      f.get(cfg.requestTimeoutMs + 1_000, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new RocketRuntimeException("rocketmq: send to " + name + ": interrupted", e);
    } catch (ExecutionException | TimeoutException e) {
      throw failure(e, "send", name);
    }
  }

  /** An exception of a failed send (what, to name), with what to check. */
  static RocketRuntimeException failure(Throwable e, String what, String name) {
    Throwable cause = (e instanceof ExecutionException || e instanceof CompletionException) && e.getCause() != null
        ? e.getCause() : e;
    String msg = String.valueOf(cause.getMessage());
    String hint = "";
    if (msg.contains("No topic route")) {
      hint = " (the topic does not exist: RocketMQ's 5.x client cannot create topics; create it with mqadmin"
          + " updateTopic, retry topics with -a +message.type=DELAY, or let a runtime-go member create it)";
    } else if (msg.contains("message type not match")) {
      hint = " (the topic's message type does not take this message: a FIFO topic's messages need its msgcontract"
          + " topic in RocketConfig.fifoTopics, and only a FIFO topic may be there; mqadmin updateTopic -a"
          + " +message.type=TYPE sets a topic's type)";
    }
    return new RocketRuntimeException("rocketmq: " + what + " to " + name + ": " + cause + hint, cause);
  }

  @Override
  public void close() {
    try {
      producer.close();
    } catch (IOException e) {
      // the client's threads stop all the same; nothing is pending after the awaited sends
    }
  }
}
