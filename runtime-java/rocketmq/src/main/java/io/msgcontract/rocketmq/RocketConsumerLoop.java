package io.msgcontract.rocketmq;

import com.google.protobuf.Message;
import io.msgcontract.support.ConnectionFactory;
import io.msgcontract.support.Consumer;
import io.msgcontract.support.DeadLetterRecord;
import io.msgcontract.support.DecodeException;
import io.msgcontract.support.Decision;
import io.msgcontract.support.Envelopes;
import io.msgcontract.support.EventSpec;
import io.msgcontract.support.Handler;
import io.msgcontract.support.Routes;
import io.msgcontract.support.TransactionBatch;
import io.msgcontract.v1.Envelope;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import org.apache.rocketmq.client.apis.ClientException;
import org.apache.rocketmq.client.apis.consumer.FilterExpression;
import org.apache.rocketmq.client.apis.consumer.SimpleConsumer;
import org.apache.rocketmq.client.apis.message.MessageView;

/**
 * A member of a group that runs generated consumers ({@link Consumer}) on
 * RocketMQ 5.x through the proxy, with the names, properties and decisions of
 * runtime-go's rocketmq transport and consumer (docs/rocketmq.md):
 *
 * <ul>
 *   <li>It receives from the topic of every registered msgcontract topic and
 *       from the group's retry topic, with a SimpleConsumer of the group for
 *       each (receive, ack, invisible duration {@link RocketConfig#leaseMs}). A
 *       message is routed by its MSGCONTRACT_TOPIC property (else its topic
 *       without the namespace) and the envelope's event type; its delivery id
 *       is the message id.
 *   <li>A copy whose MSGCONTRACT_NOT_BEFORE lies ahead is held until then;
 *       one more than 2 × timerLeadMs + 1 s ahead (a timer capped at the
 *       broker's longest) is sent on again and acknowledged.
 *   <li>Deliveries run in transactions on connections from the {@link
 *       ConnectionFactory}: dedup claim and handler commit together. Up to
 *       {@link RocketConfig#batchSize} ready deliveries (one per biz_key)
 *       share one transaction (core's {@link TransactionBatch}); a message is
 *       acknowledged only after the commit.
 *   <li>In a FIFO group ({@link RocketConfig#fifoGroups}), a biz_key's
 *       messages of the event topics run one at a time in the order they were
 *       received (the broker hands an orderly group a queue's messages in
 *       order): the next only once the one before is settled (acknowledged,
 *       or its retry copy, deferred copy or dead letter stored), while other
 *       keys go on, as runtime-go's subscription and Kafka. Retry copies
 *       leave the line. The retry topic is read as the non-orderly group
 *       named like it: the orderly group would hand out nothing more of a
 *       retry queue while a copy is held until its not_before.
 *   <li>A retryable failure sends the copy the contract's backoff calls for
 *       (retry_count + 1, not_before) to the group's retry topic as a timer
 *       message due timerLeadMs before not_before, and acknowledges the
 *       delivery once the broker has the copy. Poison goes to the dead-letter
 *       topic as a JSON record. A crash between the copy and the ack delivers
 *       the original again, which its retry chain recognises.
 *   <li>A database failure, or a copy or dead letter the broker did not take,
 *       is not the message's fault: the delivery runs again after dbRetryMs.
 *       One held longer than its lease is let go unacknowledged: the broker
 *       delivers it again when its invisible duration ends, as it does what
 *       a member that died or closed held.
 * </ul>
 *
 * <p>{@link #run()} blocks in the calling thread, which runs the handlers;
 * {@link #close()} from another thread stops it. Not thread-safe otherwise.
 */
public final class RocketConsumerLoop implements AutoCloseable {
  /** The code of a message with no handler for its event type, as in the Go runtime. */
  public static final int CODE_NO_HANDLER = Routes.CODE_NO_HANDLER;

  private static final System.Logger LOG = System.getLogger(RocketConsumerLoop.class.getName());
  private static final Object WAKE = new Object();

  private final RocketConfig cfg;
  private final String group;
  private final ConnectionFactory db;
  private final LongSupplier clock;
  private final Routes routes = new Routes("rocketmq");
  private final LinkedBlockingQueue<Object> inbox = new LinkedBlockingQueue<>(); // Received, or Runnable to run here
  private final Set<Entry> pending = new LinkedHashSet<>(); // received, unsettled, not being sent
  private final Map<String, SimpleConsumer> consumers = new LinkedHashMap<>(); // RocketMQ topic -> its consumer
  private final Set<SimpleConsumer> receiving = new HashSet<>(); // a receive in flight
  private final boolean fifo;
  // FIFO group: per biz_key, its deliveries of the event topics not yet settled, in the order received; only
  // the head may run.
  private final Map<String, ArrayDeque<Entry>> lines = new HashMap<>();
  private volatile boolean closed;
  private volatile boolean started;
  private volatile boolean consuming;
  private RocketPublisher pub;
  private long dbRetryAt;
  private long receiveAt;

  private final AtomicLong handled = new AtomicLong();
  private final AtomicLong deduplicated = new AtomicLong();
  private final AtomicLong retried = new AtomicLong();
  private final AtomicLong deadLettered = new AtomicLong();
  private final AtomicLong deferred = new AtomicLong();
  private final AtomicLong expired = new AtomicLong();

  /**
   * Tests only: asked with a delivery's id once its retry copy is stored,
   * before the delivery is acknowledged. True acts out a crash in between:
   * the delivery is let go unacknowledged, and the broker delivers the
   * original again when its lease ends.
   */
  java.util.function.Predicate<String> crashAfterRetry = id -> false;

  /**
   * Tests only: told of each delivery that reaches the loop, with its body
   * and the time it is ready for its handler: when it arrived, or its
   * not_before when it is held until then (never before it).
   */
  java.util.function.ObjLongConsumer<byte[]> readyForTests = (body, at) -> {};

  private record Received(SimpleConsumer from, List<MessageView> messages, Throwable error) {}

  private static final class Entry {
    final SimpleConsumer from;
    final MessageView mv;
    final String topic;
    final String id;
    final int attempt;
    final byte[] delivered;
    final long notBefore;
    final long receivedAt;
    long dueAt;
    // The biz_key whose line it is in (FIFO group, event topics); null for none.
    String key;
    // Set by prepare when the delivery is READY.
    Routes.Route<?> route;
    Envelope env;
    // The body decoded, once (envelope()); null until then, or when it is no envelope.
    private Envelope decoded;

    Entry(SimpleConsumer from, MessageView mv, RocketConfig cfg, long now) {
      this.from = from;
      this.mv = mv;
      Map<String, String> p = mv.getProperties();
      String t = p.get(RocketConfig.PROP_TOPIC);
      this.topic = t == null || t.isEmpty() ? cfg.topicOf(mv.getTopic()) : t;
      this.id = mv.getMessageId().toString();
      int a = (int) number(p.get(RocketConfig.PROP_ATTEMPT));
      this.attempt = a > 0 ? a : mv.getDeliveryAttempt();
      ByteBuffer b = mv.getBody();
      this.delivered = new byte[b.remaining()];
      b.duplicate().get(this.delivered);
      this.notBefore = number(p.get(RocketConfig.PROP_NOT_BEFORE));
      this.receivedAt = now;
    }

    /** The delivered envelope, decoded on first use; throws when the body is no envelope. */
    Envelope envelope() throws DecodeException {
      if (decoded == null) {
        decoded = Envelopes.decode(delivered);
      }
      return decoded;
    }
  }

  /** What became of a delivery in prepare or a decision. */
  private enum Outcome { SETTLED, DEFERRED, FAILED, READY }

  static long number(String v) {
    if (v == null || v.isEmpty()) {
      return 0;
    }
    try {
      return Long.parseLong(v);
    } catch (NumberFormatException e) {
      return 0;
    }
  }

  /**
   * Returns a loop of group's member.
   *
   * @param cfg the proxy and namespace; validated here
   * @param group the group (the consumer group is the namespace and group; dedup is per handler)
   * @param db opens a connection per transaction
   */
  public RocketConsumerLoop(RocketConfig cfg, String group, ConnectionFactory db) {
    this(cfg, group, db, System::currentTimeMillis);
  }

  /** Like {@link #RocketConsumerLoop(RocketConfig, String, ConnectionFactory)} with a clock (UTC epoch ms). */
  public RocketConsumerLoop(RocketConfig cfg, String group, ConnectionFactory db, LongSupplier clock) {
    cfg.validate();
    if (group == null || group.isEmpty()) {
      throw new IllegalArgumentException("rocketmq: group is empty");
    }
    this.cfg = cfg;
    this.group = group;
    this.db = db;
    this.clock = clock;
    this.fifo = cfg.isFifoGroup(group);
  }

  /**
   * Registers handler for spec's event under handlerName, the dedup key's
   * second half: keep it stable across deploys and equal to the Go or Python
   * handler it shares a database with.
   */
  public <M extends Message> RocketConsumerLoop register(EventSpec<M> spec, String handlerName, Handler<M> handler) {
    return register(spec, handlerName, new Consumer<>(spec, handlerName, handler));
  }

  /** Registers a consumer built by the caller (an observer, a tracer, a clock of its own); one per topic and event type. */
  public <M extends Message> RocketConsumerLoop register(EventSpec<M> spec, String handlerName, Consumer<M> c) {
    if (started) {
      throw new IllegalStateException("rocketmq: register before run");
    }
    if (spec.topic().isEmpty()) {
      throw new IllegalArgumentException("rocketmq: the event " + spec.eventType() + " has no topic");
    }
    routes.add(spec, handlerName, c);
    return this;
  }

  /** Deliveries whose handler committed. */
  public long handled() {
    return handled.get();
  }

  /** Deliveries acknowledged as duplicates. */
  public long deduplicated() {
    return deduplicated.get();
  }

  /** Retry copies sent (and stored by the broker). */
  public long retried() {
    return retried.get();
  }

  /** Dead letters written (and stored by the broker). */
  public long deadLettered() {
    return deadLettered.get();
  }

  /** Deliveries sent on to the retry topic because they were not due. */
  public long deferred() {
    return deferred.get();
  }

  /** Deliveries let go unacknowledged because their lease ran out (the broker delivers them again). */
  public long expired() {
    return expired.get();
  }

  /** True once the loop receives (its consumer started). */
  public boolean consuming() {
    return consuming && !closed;
  }

  /** Stops {@link #run()}: what it holds unacknowledged comes again when its invisible duration ends. */
  @Override
  public void close() {
    closed = true;
    inbox.add(WAKE);
  }

  /**
   * Receives and handles until {@link #close()}.
   *
   * @throws RocketRuntimeException when the proxy is unreachable at start or a topic does not exist
   */
  public void run() {
    if (routes.isEmpty()) {
      throw new IllegalStateException("rocketmq: no handler registered");
    }
    started = true;
    List<String> topics = new ArrayList<>();
    for (String t : routes.topics()) {
      topics.add(cfg.topicName(t));
    }
    topics.add(cfg.retryTopic(group));
    try (RocketPublisher p = new RocketPublisher(cfg, clock)) {
      pub = p;
      try {
        // One consumer of the group per topic: a receive long-polls one
        // topic for at least the proxy's minimum (5 s by default) when it
        // is empty, so one consumer of all would hold the busy topic up
        // behind the idle retry topic.
        for (String t : topics) {
          try {
            consumers.put(t, p.provider().newSimpleConsumerBuilder().setClientConfiguration(p.clientConfig())
                .setConsumerGroup(consumerGroup(t)).setAwaitDuration(Duration.ofMillis(cfg.awaitMs))
                .setSubscriptionExpressions(Map.of(t, FilterExpression.SUB_ALL)).build());
          } catch (ClientException e) {
            throw RocketPublisher.failure(e, "subscribe group " + consumerGroup(t), t);
          }
        }
        consuming = true;
        while (!closed) {
          step();
        }
      } finally {
        for (SimpleConsumer c : consumers.values()) {
          try {
            c.close();
          } catch (IOException e) {
            // what it held comes again when its invisible duration ends
          }
        }
      }
    }
  }

  /**
   * The consumer group that reads RocketMQ topic name: the group, but a FIFO
   * group's retry topic is read as the non-orderly group named like it.
   */
  String consumerGroup(String name) {
    return fifo && name.equals(cfg.retryTopic(group)) ? cfg.retryTopic(group) : cfg.groupName(group);
  }

  /** Asks for more when there is room, takes what arrived (waiting until something is due), runs what is due. */
  private void step() {
    long now = clock.getAsLong();
    for (SimpleConsumer c : consumers.values()) {
      // Each topic's consumer asks on its own, so none starves behind another.
      if (!receiving.contains(c) && now >= receiveAt && pending.size() + cfg.batchSize <= cfg.maxInFlight) {
        receiving.add(c);
        c.receiveAsync(cfg.batchSize, Duration.ofMillis(cfg.leaseMs))
            .whenComplete((ms, x) -> inbox.add(new Received(c, ms, x)));
      }
    }
    long wait = 200;
    for (Entry e : pending) {
      if (atHead(e)) { // one behind another of its key runs once that one is settled, which wakes the loop
        wait = Math.min(wait, Math.max(Math.max(e.dueAt, dbRetryAt) - now, 0));
      }
      wait = Math.min(wait, Math.max(e.receivedAt + cfg.leaseMs - now, 0));
    }
    try {
      Object o = wait > 0 ? inbox.poll(wait, TimeUnit.MILLISECONDS) : inbox.poll();
      while (o != null) {
        take(o);
        o = inbox.poll();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      closed = true;
      return;
    }
    expireLeases();
    if (clock.getAsLong() >= dbRetryAt) {
      processReady();
    }
  }

  private void take(Object o) {
    if (o instanceof Runnable r) {
      r.run();
      return;
    }
    if (!(o instanceof Received r)) {
      return;
    }
    receiving.remove(r.from());
    if (r.error() != null) {
      if (!closed) {
        receiveAt = clock.getAsLong() + cfg.dbRetryMs;
        LOG.log(Level.WARNING, "msgcontract: rocketmq: receive for group " + cfg.groupName(group) + " failed; trying"
            + " again in " + cfg.dbRetryMs + " ms: " + r.error());
      }
      return;
    }
    for (MessageView mv : r.messages()) {
      if (closed) {
        return; // unacknowledged: it comes again when its invisible duration ends
      }
      Entry e = new Entry(r.from(), mv, cfg, clock.getAsLong());
      long wait = e.notBefore - e.receivedAt;
      if (wait > 2 * cfg.timerLeadMs + 1_000) {
        // Came early: a timer capped at the broker's longest. Sent on again, due later.
        sendOn(e, e.notBefore);
        continue;
      }
      e.dueAt = e.notBefore;
      // Due when taken, or held until its not_before.
      readyForTests.accept(e.delivered, Math.max(e.receivedAt, e.notBefore));
      pending.add(e);
      if (fifo && r.from() != consumers.get(cfg.retryTopic(group))) {
        queueUp(e);
      }
    }
  }

  /** Puts e at the end of its biz_key's line (none when its body is no envelope or its biz_key is empty). */
  private void queueUp(Entry e) {
    try {
      String k = e.envelope().getBizKey();
      if (!k.isEmpty()) {
        e.key = k;
        lines.computeIfAbsent(k, x -> new ArrayDeque<>()).addLast(e);
      }
    } catch (DecodeException x) {
      // no line: prepare dead-letters it
    }
  }

  /** True when e may run: it is in no line, or at the head of its line. */
  private boolean atHead(Entry e) {
    return e.key == null || lines.get(e.key).peekFirst() == e;
  }

  /** Takes e, settled or let go, out of its key's line: the key's next delivery may run. */
  private void leaveLine(Entry e) {
    if (e.key == null) {
      return;
    }
    ArrayDeque<Entry> line = lines.get(e.key);
    line.remove(e);
    if (line.isEmpty()) {
      lines.remove(e.key);
    }
    e.key = null;
  }

  /** Lets go (unacknowledged) each delivery held longer than its lease: the broker delivers it again. */
  private void expireLeases() {
    long now = clock.getAsLong();
    for (Entry e : new ArrayList<>(pending)) {
      if (now - e.receivedAt >= cfg.leaseMs) {
        pending.remove(e);
        leaveLine(e);
        expired.incrementAndGet();
        LOG.log(Level.WARNING, "msgcontract: rocketmq: delivery " + e.id + " of " + e.mv.getTopic() + " (attempt "
            + e.attempt + ") held longer than its lease (" + cfg.leaseMs + " ms); the broker delivers it again");
      }
    }
  }

  /** Sends e's body on to the retry topic, not before notBefore, and acknowledges e once the broker has it. */
  private void sendOn(Entry e, long notBefore) {
    Envelope env;
    try {
      env = e.envelope();
    } catch (DecodeException x) {
      env = Envelope.getDefaultInstance();
    }
    settleAfter(e, pub.publishCopy(group, e.topic, env, e.delivered, notBefore), deferred, "defer");
  }

  /**
   * Acknowledges e once f (its copy or dead letter) is stored, and counts it;
   * when f failed, e runs again after dbRetryMs.
   */
  private void settleAfter(Entry e, CompletableFuture<Void> f, AtomicLong counter, String what) {
    pending.remove(e);
    f.whenComplete((v, x) -> inbox.add((Runnable) () -> {
      if (x == null) {
        counter.incrementAndGet();
        if (counter == retried && crashAfterRetry.test(e.id)) {
          leaveLine(e);
          return; // no ack: the original comes again when its lease ends
        }
        ack(e);
        return;
      }
      LOG.log(Level.WARNING, "msgcontract: rocketmq: " + what + " of delivery " + e.id + " not stored; it runs"
          + " again in " + cfg.dbRetryMs + " ms: " + RocketPublisher.failure(x, what, e.mv.getTopic()).getMessage());
      if (!closed && clock.getAsLong() - e.receivedAt < cfg.leaseMs) {
        e.dueAt = clock.getAsLong() + cfg.dbRetryMs;
        pending.add(e); // still at the head of its key's line
      } else {
        leaveLine(e); // let go: the broker delivers it again
      }
    }));
  }

  private void ack(Entry e) {
    pending.remove(e);
    leaveLine(e);
    e.from.ackAsync(e.mv).whenComplete((v, x) -> {
      if (x != null) {
        // Its lease ran out, or the proxy is gone: it comes again, and the claims absorb it.
        LOG.log(Level.INFO, "msgcontract: rocketmq: ack of " + e.id + " failed (" + x
            + "); it is delivered again and deduplicated");
      }
    });
  }

  /**
   * Runs the due deliveries: the steps before the database one by one, the
   * ready ones batchSize at a time (one per biz_key) in shared transactions.
   * In a FIFO group only the head of a key's line is due.
   */
  private void processReady() {
    TransactionBatch.forReady(new ArrayList<>(pending), cfg.batchSize,
        e -> e.dueAt <= clock.getAsLong() && pending.contains(e) && atHead(e),
        e -> prepare(e) == Outcome.READY ? e.env.getBizKey() : null,
        batch -> runBatch(batch) != Outcome.FAILED, () -> closed);
  }

  /**
   * The steps of e before the database: decode, route, payload and
   * not_before. A delivery that fails them is dead-lettered; one not due is
   * deferred; one that passes is READY, with its route and envelope in e.
   */
  private Outcome prepare(Entry e) {
    Routes.Prepared p;
    try {
      p = routes.prepare(e.topic, e.envelope(), group, clock.getAsLong());
    } catch (DecodeException x) {
      p = Routes.undecodable(x);
    }
    if (p instanceof Routes.Dead d) {
      return deadLetter(e, d.handler(), d.env(), d.reason(), d.code(), d.error(), 0);
    }
    if (p instanceof Routes.NotDue n) {
      sendOn(e, n.notBeforeMs());
      return Outcome.DEFERRED;
    }
    Routes.Ready r = (Routes.Ready) p;
    e.route = r.route();
    e.env = r.env();
    return Outcome.READY;
  }

  /**
   * Runs the database part of ready deliveries (distinct biz_keys) in core's
   * {@link TransactionBatch}, then carries out each decision. FAILED when the
   * database failed (those deliveries run again after dbRetryMs).
   */
  private Outcome runBatch(List<Entry> ready) {
    TransactionBatch.Result r = TransactionBatch.run(db, ready.stream()
        .map(e -> new TransactionBatch.Item(e.route.consumer(), e.env, e.delivered, e.id)).toList());
    for (TransactionBatch.Decided d : r.decided()) {
      decided(ready.get(d.index()), d.decision());
    }
    if (r.failed().isEmpty()) {
      return Outcome.SETTLED;
    }
    long at = clock.getAsLong() + cfg.dbRetryMs;
    for (int i : r.failed()) {
      ready.get(i).dueAt = at;
    }
    dbRetryAt = at;
    return Outcome.FAILED;
  }

  /** Carries out the decision taken for e in a committed transaction. */
  private void decided(Entry e, Decision d) {
    if (d instanceof Decision.Ack a) {
      (a.deduplicated() ? deduplicated : handled).incrementAndGet();
      ack(e);
      return;
    }
    if (d instanceof Decision.Defer df) {
      sendOn(e, df.notBeforeMs());
      return;
    }
    if (d instanceof Decision.Retry rt) {
      Envelope next = rt.nextEnvelope();
      settleAfter(e, pub.publishCopy(group, e.topic, next, Envelopes.encode(next), next.getNotBefore()), retried,
          "retry");
      return;
    }
    Decision.DeadLetter dl = (Decision.DeadLetter) d;
    deadLetter(e, e.route.handlerName(), e.env, dl.reason(), dl.code(), dl.error(), dl.attempts());
  }

  /** Appends e's dead-letter record to the dead-letter topic; e is acknowledged once the broker has it. */
  private Outcome deadLetter(Entry e, String handler, Envelope env, String reason, int code, String error,
      int attempts) {
    Instant at = Instant.ofEpochMilli(clock.getAsLong());
    Instant first = env != null && env.getFirstFailedAt() > 0 ? Instant.ofEpochMilli(env.getFirstFailedAt()) : at;
    DeadLetterRecord r = new DeadLetterRecord("", e.topic, group, handler, env == null ? "" : env.getEventType(),
        env == null ? "" : env.getBizKey(), env == null ? "" : env.getMessageId(), e.delivered, reason, code, error,
        attempts, first, at, at, 0, null);
    settleAfter(e, pub.storeRecord(r), deadLettered, "dead letter");
    return Outcome.SETTLED;
  }
}
