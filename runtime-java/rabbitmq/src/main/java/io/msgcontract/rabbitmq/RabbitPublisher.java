package io.msgcontract.rabbitmq;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.AlreadyClosedException;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ShutdownSignalException;
import io.msgcontract.support.DeadLetterRecord;
import io.msgcontract.support.DecodeException;
import io.msgcontract.support.Envelopes;
import io.msgcontract.v1.Envelope;
import java.io.IOException;
import java.security.SecureRandom;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentNavigableMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.LongSupplier;

/**
 * Publishes envelopes as docs/rabbitmq.md ("Messages") specifies and
 * runtime-go's rabbitmq transport does: to the topic exchange P with routing
 * key = topic, persistent, under a fresh 32-hex-digit message_id, content type
 * {@value #CONTENT_TYPE}, header {@value #HEADER_TOPIC} (and
 * {@value #HEADER_NOT_BEFORE} when the envelope has a not_before). Every
 * publish goes through a channel in confirm mode and waits for the broker's
 * confirm, at most {@link RabbitConfig#publishTimeoutMs}; a nack, a closed
 * channel or no confirm in time is a {@link RabbitRuntimeException}, and while
 * the broker blocks the connection (a memory or disk alarm) a publish fails at
 * once naming the alarm. It declares the exchanges, P.unrouted and P.dlq, and
 * the queues of {@link RabbitConfig#topology}, when it starts. Safe for
 * concurrent use; publishes from several threads are in flight together.
 */
public final class RabbitPublisher implements AutoCloseable {
  /** The content type of every message carrying an envelope. */
  public static final String CONTENT_TYPE = "application/x-protobuf; messageType=msgcontract.v1.Envelope";
  /** The topic the message was published to (longstr). */
  public static final String HEADER_TOPIC = "x-msgcontract-topic";
  /** Not to be handled before this time, ms since the epoch (signed 64-bit). */
  public static final String HEADER_NOT_BEFORE = "x-msgcontract-not-before";
  /** The group of a dead-letter record. */
  public static final String HEADER_GROUP = "x-msgcontract-group";
  /** RabbitMQ's sender-selected distribution header: the group queue a delayed copy returns to. */
  static final String HEADER_CC = "CC";
  /** Set by quorum queues on a redelivery. */
  static final String HEADER_DELIVERY_COUNT = "x-delivery-count";

  private static final SecureRandom RANDOM = new SecureRandom();

  private final RabbitConfig cfg;
  private final Topology names;
  private final LongSupplier clock;
  private final com.rabbitmq.client.ConnectionFactory factory;
  private final Object connLock = new Object();
  private Connection conn; // redialled when it closed
  private volatile String blocked; // the broker's reason while it blocks publishers
  private boolean closed;

  private final Object pubLock = new Object();
  private ConfirmChannel pub;
  private final Object adminLock = new Object();
  private Channel admin;
  private final Set<String> declared = ConcurrentHashMap.newKeySet();

  /** A channel in confirm mode and its publishes waiting for a confirm, by sequence number. */
  private static final class ConfirmChannel {
    final Channel ch;
    final ConcurrentNavigableMap<Long, CompletableFuture<Void>> pending = new ConcurrentSkipListMap<>();

    ConfirmChannel(Channel ch) {
      this.ch = ch;
    }

    void settle(long seq, boolean multiple, Exception failure) {
      Map<Long, CompletableFuture<Void>> done = multiple ? pending.headMap(seq, true)
          : pending.containsKey(seq) ? Map.of(seq, pending.get(seq)) : Map.of();
      for (Map.Entry<Long, CompletableFuture<Void>> e : Map.copyOf(done).entrySet()) {
        pending.remove(e.getKey());
        if (failure == null) {
          e.getValue().complete(null);
        } else {
          e.getValue().completeExceptionally(failure);
        }
      }
    }
  }

  /**
   * Validates cfg, connects, and declares the exchanges, P.unrouted, P.dlq and
   * the queues of cfg.topology.
   *
   * @param cfg the broker and prefix
   * @throws RabbitRuntimeException when the broker cannot be reached or refuses a declaration
   */
  public RabbitPublisher(RabbitConfig cfg) {
    this(cfg, System::currentTimeMillis);
  }

  /** Like {@link #RabbitPublisher(RabbitConfig)} with a clock (UTC epoch ms) that turns not_before into a wait. */
  public RabbitPublisher(RabbitConfig cfg, LongSupplier clock) {
    cfg.validate();
    this.cfg = cfg;
    this.names = new Topology(cfg.prefix);
    this.clock = clock;
    this.factory = new com.rabbitmq.client.ConnectionFactory();
    try {
      factory.setUri(cfg.url);
    } catch (Exception e) {
      throw new IllegalArgumentException("rabbitmq: url \"" + RabbitConfig.redact(cfg.url) + "\": " + e.getMessage(), e);
    }
    // amqp://host:5672/ names the default vhost "/", as runtime-go's client
    // (amqp091-go) and the docs read it; the Java client would take "".
    String path = java.net.URI.create(cfg.url).getRawPath();
    if (path == null || path.isEmpty() || path.equals("/")) {
      factory.setVirtualHost("/");
    }
    factory.setConnectionTimeout((int) Math.min(cfg.connectTimeoutMs, Integer.MAX_VALUE));
    factory.setAutomaticRecoveryEnabled(false); // redialled lazily, as runtime-go does
    connection();
    admin(ch -> names.declareBase(ch), "declare the exchanges, " + names.unrouted() + " and " + names.dlq());
    cfg.topology.forEach((topic, groups) -> groups.forEach(g -> declareGroup(g, topic)));
  }

  /** The names under the configured prefix. */
  public Topology topology() {
    return names;
  }

  RabbitConfig config() {
    return cfg;
  }

  long now() {
    return clock.getAsLong();
  }

  /** The connection, dialled again when it closed (a broker restart, a lost network). */
  Connection connection() {
    synchronized (connLock) {
      if (closed) {
        throw new RabbitRuntimeException("rabbitmq: the publisher is closed", null);
      }
      if (conn == null || !conn.isOpen()) {
        try {
          Connection c = factory.newConnection("msgcontract runtime-java");
          c.addBlockedListener(reason -> blocked = reason == null || reason.isEmpty() ? "no reason given" : reason,
              () -> blocked = null);
          blocked = null;
          conn = c;
        } catch (IOException | TimeoutException e) {
          throw new RabbitRuntimeException("rabbitmq: connect to " + RabbitConfig.redact(cfg.url) + ": " + e
              + (e.getCause() != null ? " (" + e.getCause() + ")" : "")
              + " (is the broker up and the URL's user allowed in?)", e);
        }
      }
      return conn;
    }
  }

  /** Opens a channel on the connection. */
  Channel newChannel() {
    Connection c = connection();
    try {
      Channel ch = c.createChannel();
      if (ch == null) {
        throw new RabbitRuntimeException("rabbitmq: no channel left on the connection to "
            + RabbitConfig.redact(cfg.url), null);
      }
      return ch;
    } catch (IOException | AlreadyClosedException e) {
      throw new RabbitRuntimeException("rabbitmq: open a channel on " + RabbitConfig.redact(cfg.url) + ": " + e, e);
    }
  }

  /** An error naming the alarm while the broker blocks publishers, else null. */
  RabbitRuntimeException blockedError() {
    String b = blocked;
    if (b == null) {
      return null;
    }
    return new RabbitRuntimeException("rabbitmq: the broker at " + RabbitConfig.redact(cfg.url)
        + " blocks publishers (" + b + "): a memory or disk alarm; free memory or disk on the broker or raise its"
        + " vm_memory_high_watermark / disk_free_limit", null);
  }

  @FunctionalInterface
  interface AdminCall {
    void run(Channel ch) throws IOException;
  }

  /** Runs call on the declaration channel, opened again when an earlier failure closed it. */
  void admin(AdminCall call, String what) {
    synchronized (adminLock) {
      try {
        if (admin == null || !admin.isOpen()) {
          admin = newChannel();
        }
        call.run(admin);
      } catch (IOException | ShutdownSignalException e) {
        Throwable cause = e.getCause() instanceof ShutdownSignalException s ? s : e;
        throw new RabbitRuntimeException("rabbitmq: " + what + ": " + cause.getMessage()
            + " (a PRECONDITION_FAILED names an argument that differs from docs/rabbitmq.md: delete the queue or"
            + " exchange, or use another prefix)", e);
      }
    }
  }

  /** Declares group's queue of topic and its bindings (once per publisher). */
  void declareGroup(String group, String topic) {
    String q = names.queue(group, topic);
    if (declared.contains(q)) {
      return;
    }
    admin(ch -> names.declareGroup(ch, group, topic), "declare queue " + q);
    declared.add(q);
  }

  /** Declares group's delay queue of 2^exp ms (once per publisher). */
  void declareDelay(String group, int exp) {
    String q = names.delayQueue(group, exp);
    if (declared.contains(q)) {
      return;
    }
    admin(ch -> names.declareDelay(ch, group, exp), "declare delay queue " + q);
    declared.add(q);
  }

  boolean isDeclared(String queue) {
    return declared.contains(queue);
  }

  /** A fresh transport message id: 32 lowercase hex digits (16 random bytes). */
  public static String newMessageId() {
    byte[] b = new byte[16];
    RANDOM.nextBytes(b);
    return HexFormat.of().formatHex(b);
  }

  /** A dead-letter record id: %016x of the time in microseconds since the epoch, '-', 8 random hex digits. */
  static String newRecordId(long nowMs) {
    byte[] b = new byte[4];
    RANDOM.nextBytes(b);
    return String.format("%016x-%s", nowMs * 1000, HexFormat.of().formatHex(b));
  }

  /**
   * Publishes env to its topic (env.topic) and waits for the broker's confirm.
   *
   * @throws RabbitRuntimeException when the broker did not confirm it
   */
  public void publish(Envelope env) {
    publish(env.getTopic(), Envelopes.encode(env), env.getNotBefore());
  }

  /**
   * Publishes an encoded envelope to topic and waits for the broker's confirm;
   * its not_before, when it decodes and has one, goes in the
   * {@value #HEADER_NOT_BEFORE} header.
   *
   * @throws RabbitRuntimeException when the broker did not confirm it
   */
  public void publish(String topic, byte[] body) {
    long nb = 0;
    try {
      nb = Envelopes.decode(body).getNotBefore();
    } catch (DecodeException e) {
      // published as it is: the consumers dead-letter it with reason decode
    }
    publish(topic, body, nb);
  }

  private void publish(String topic, byte[] body, long notBefore) {
    String bad = RabbitConfig.checkTopic(topic);
    if (bad != null) {
      throw new IllegalArgumentException(bad);
    }
    Map<String, Object> h = new HashMap<>();
    h.put(HEADER_TOPIC, topic);
    if (notBefore > 0) {
      h.put(HEADER_NOT_BEFORE, notBefore);
    }
    await(publishAsync(names.topicExchange(), topic, props(newMessageId(), h), body),
        names.topicExchange(), topic);
  }

  static AMQP.BasicProperties props(String messageId, Map<String, Object> headers) {
    return new AMQP.BasicProperties.Builder().contentType(CONTENT_TYPE).deliveryMode(2).messageId(messageId)
        .headers(headers).build();
  }

  /**
   * Publishes body to group's queue of topic only, not to be handled before
   * notBefore (ms since the epoch, 0: now), under message id: through the
   * longest delay queue not longer than the wait with header CC = [the
   * group's queue], or straight through P.retry when the wait is under 16 ms.
   * The returned future completes when the broker confirmed it.
   */
  CompletableFuture<Void> publishToGroup(String group, String topic, byte[] body, String id, long notBefore) {
    String q = names.queue(group, topic);
    Map<String, Object> h = new HashMap<>();
    h.put(HEADER_TOPIC, topic);
    if (notBefore > 0) {
      h.put(HEADER_NOT_BEFORE, notBefore);
    }
    try {
      while (true) {
        int exp = Topology.bucket(notBefore - clock.getAsLong());
        if (exp < 0) {
          return publishAsync(names.retryExchange(), q, props(id, h), body);
        }
        String dq = names.delayQueue(group, exp);
        if (!declared.contains(dq)) {
          // Declaring a quorum queue takes a while: the wait is measured
          // again and may call for a shorter queue.
          declareDelay(group, exp);
          continue;
        }
        h.put(HEADER_CC, List.of(q));
        return publishAsync(names.delayExchange(), dq, props(id, h), body);
      }
    } catch (RabbitRuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  /** Publishes on the confirm channel; the future completes with the broker's confirm (or fails). */
  CompletableFuture<Void> publishAsync(String exchange, String key, AMQP.BasicProperties props, byte[] body) {
    RabbitRuntimeException b = blockedError();
    if (b != null) {
      return CompletableFuture.failedFuture(b);
    }
    CompletableFuture<Void> f = new CompletableFuture<>();
    try {
      synchronized (pubLock) {
        ConfirmChannel cc = confirmChannel();
        long seq = cc.ch.getNextPublishSeqNo();
        cc.pending.put(seq, f);
        try {
          cc.ch.basicPublish(exchange, key, false, props, body);
        } catch (IOException | AlreadyClosedException e) {
          cc.pending.remove(seq);
          f.completeExceptionally(e);
        }
      }
    } catch (RabbitRuntimeException e) {
      f.completeExceptionally(e);
    }
    return f.orTimeout(cfg.publishTimeoutMs, TimeUnit.MILLISECONDS);
  }

  private ConfirmChannel confirmChannel() {
    if (pub != null && pub.ch.isOpen()) {
      return pub;
    }
    Channel ch = newChannel();
    ConfirmChannel cc = new ConfirmChannel(ch);
    try {
      ch.confirmSelect();
    } catch (IOException e) {
      throw new RabbitRuntimeException("rabbitmq: publisher confirms (confirm.select): " + e, e);
    }
    ch.addConfirmListener((seq, multiple) -> cc.settle(seq, multiple, null),
        (seq, multiple) -> cc.settle(seq, multiple, new IOException(
            "the broker refused it (basic.nack); see its log")));
    ch.addShutdownListener(s -> cc.settle(Long.MAX_VALUE, true, s));
    pub = cc;
    return cc;
  }

  /**
   * Waits for f, a publish to exchange with key.
   *
   * @throws RabbitRuntimeException when it was not confirmed, naming the alarm while the broker blocks publishers
   */
  void await(CompletableFuture<Void> f, String exchange, String key) {
    try {
      f.get();
    } catch (ExecutionException e) {
      throw failure(e.getCause(), exchange, key);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new RabbitRuntimeException("rabbitmq: publish to exchange \"" + exchange + "\" key \"" + key
          + "\": interrupted", e);
    }
  }

  /** The error of a publish that failed with cause. */
  RabbitRuntimeException failure(Throwable cause, String exchange, String key) {
    if (cause instanceof RabbitRuntimeException r) {
      return r;
    }
    RabbitRuntimeException b = blockedError();
    String why = b != null ? b.getMessage()
        : cause instanceof TimeoutException ? "no confirm within " + cfg.publishTimeoutMs + " ms (publishTimeoutMs)"
        : String.valueOf(cause);
    return new RabbitRuntimeException("rabbitmq: publish to exchange \"" + exchange + "\" key \"" + key + "\": "
        + why, cause);
  }

  /** Publishes a dead-letter record to P.dlq through the default exchange; the future completes on its confirm. */
  CompletableFuture<Void> storeRecord(DeadLetterRecord r) {
    AMQP.BasicProperties props = new AMQP.BasicProperties.Builder().contentType("application/json").deliveryMode(2)
        .messageId(r.id()).headers(Map.of(HEADER_GROUP, r.group(), HEADER_TOPIC, r.topic())).build();
    return publishAsync("", names.dlq(), props, r.toJson().getBytes(java.nio.charset.StandardCharsets.UTF_8));
  }

  /** Closes the connection: unacknowledged deliveries go back to their queues. */
  @Override
  public void close() {
    synchronized (connLock) {
      closed = true;
      if (conn != null && conn.isOpen()) {
        try {
          conn.close(5000);
        } catch (IOException | AlreadyClosedException e) {
          // closing anyway
        }
      }
    }
  }
}
