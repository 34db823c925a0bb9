package io.msgcontract.rabbitmq;

import com.google.protobuf.Message;
import com.rabbitmq.client.AlreadyClosedException;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Delivery;
import io.msgcontract.support.Consumer;
import io.msgcontract.support.DeadLetterRecord;
import io.msgcontract.support.Decision;
import io.msgcontract.support.Envelopes;
import io.msgcontract.support.EventSpec;
import io.msgcontract.support.Handler;
import io.msgcontract.support.Routes;
import io.msgcontract.support.TransactionBatch;
import io.msgcontract.v1.Envelope;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * A member of a group that runs generated consumers ({@link Consumer}) on
 * RabbitMQ with the consuming rules of docs/rabbitmq.md and the decisions of
 * runtime-go's consumer on its rabbitmq transport, so Go, Java and Python
 * members share one group queue:
 *
 * <ul>
 *   <li>It declares and consumes P/G/T for every registered topic T
 *       (basic.consume, no auto-ack, consumer tag = the queue name, one channel)
 *       with basic.qos(prefetch, global = false), and declares G's delay queues
 *       of 16 ms to 4096 ms ahead (the longer ones when first used). A delivery
 *       is routed by the envelope's event type; its Topic is the queue's T, its
 *       id the message_id, its attempt 1 + x-delivery-count.
 *   <li>A delivery whose x-msgcontract-not-before header (or envelope
 *       not_before) lies 16 ms or more ahead is published again, same body and
 *       message_id, through the delay queue for the wait, and acknowledged once
 *       the broker confirmed the copy; one due sooner is held until due.
 *   <li>Deliveries run in transactions on connections from the
 *       {@link ConnectionFactory}: dedup claim and handler commit together. Up
 *       to {@link RabbitConfig#batchSize} ready deliveries (one per biz_key)
 *       share one transaction, each in a savepoint, with one commit, as
 *       runtime-java/kafka's loop does; basic.ack is sent only after the commit.
 *   <li>A retryable failure publishes the copy the contract's backoff calls for
 *       (retry_count + 1, not_before) under a fresh message_id to the group's
 *       queue only, through the delay queue P.delay/G/2^k (header CC) or P.retry
 *       when due in under 16 ms, and acknowledges the delivery after the
 *       confirm. Poison goes to P.dlq as a JSON record ({@link DeadLetterRecord}),
 *       acknowledged after the confirm. It never nacks to retry.
 *   <li>One retry chain per message ({@code io.msgcontract.support.RetryChain}),
 *       keyed on the message_id: a crash between a retry's publish and its ack
 *       delivers the original again, which the chain recognises.
 *   <li>A database failure, or a retry or dead letter the broker did not
 *       confirm (a memory alarm), is not the message's fault: the delivery runs
 *       again after dbRetryMs, unacknowledged. A delivery held longer than
 *       {@link RabbitConfig#leaseMs} is handed back (basic.nack, requeue).
 *   <li>A closed channel or connection hands every unacknowledged delivery
 *       back (the broker's doing); the loop consumes again on a new channel,
 *       and what it had committed but not acknowledged comes again and is
 *       deduplicated by the claims.
 * </ul>
 *
 * <p>{@link #run()} blocks in the calling thread, which runs the handlers;
 * {@link #close()} from another thread stops it. Not thread-safe otherwise.
 */
public final class RabbitConsumerLoop implements AutoCloseable {
  /** The code of a message with no handler for its event type, as in the Go runtime. */
  public static final int CODE_NO_HANDLER = Routes.CODE_NO_HANDLER;

  private static final System.Logger LOG = System.getLogger(RabbitConsumerLoop.class.getName());
  private static final Object WAKE = new Object();

  private final RabbitConfig cfg;
  private final String group;
  private final ConnectionFactory db;
  private final LongSupplier clock;
  private final Routes routes = new Routes("rabbitmq");
  private final Map<String, String> queues = new HashMap<>(); // queue name -> topic
  private final LinkedBlockingQueue<Object> inbox = new LinkedBlockingQueue<>(); // Entry, or Runnable to run here
  private final Set<Entry> pending = new LinkedHashSet<>(); // received, unsettled, not being published
  private volatile boolean closed;
  private volatile boolean started;
  private volatile Channel channel;
  private volatile RabbitPublisher pub;
  private long dbRetryAt;

  private final AtomicLong handled = new AtomicLong();
  private final AtomicLong deduplicated = new AtomicLong();
  private final AtomicLong retried = new AtomicLong();
  private final AtomicLong deadLettered = new AtomicLong();
  private final AtomicLong deferred = new AtomicLong();
  private final AtomicLong requeued = new AtomicLong();

  /**
   * Tests only: asked with a delivery's message_id once its retry copy is
   * confirmed, before the delivery is acknowledged. True acts out a crash in
   * between: the connection is aborted instead of acking, and the broker
   * delivers the original again.
   */
  java.util.function.Predicate<String> crashAfterRetry = id -> false;

  /**
   * Tests only: told of each delivery that reaches the loop due or within
   * 16 ms of due (not sent on through a delay queue), with its body and the
   * time it is ready for its handler: when it arrived, or its not_before when
   * it is held until then (never before it). The transport's side of the retry
   * delays: how late the delay queues handed it over.
   */
  java.util.function.ObjLongConsumer<byte[]> readyForTests = (body, at) -> {};

  private static final class Entry {
    final Channel ch;
    final long tag;
    final String queue;
    final String topic;
    final String id;
    final int attempt;
    final byte[] delivered;
    final long notBeforeHeader;
    final long receivedAt;
    long dueAt;
    // Set by prepare when the delivery is READY.
    Routes.Route<?> route;
    Envelope env;

    Entry(Channel ch, Delivery d, String queue, String topic, long now) {
      this.ch = ch;
      this.tag = d.getEnvelope().getDeliveryTag();
      this.queue = queue;
      this.topic = topic;
      String mid = d.getProperties().getMessageId();
      this.id = mid == null ? "" : mid;
      Map<String, Object> h = d.getProperties().getHeaders();
      this.attempt = 1 + (int) number(h, RabbitPublisher.HEADER_DELIVERY_COUNT);
      this.notBeforeHeader = number(h, RabbitPublisher.HEADER_NOT_BEFORE);
      this.delivered = d.getBody() == null ? new byte[0] : d.getBody();
      this.receivedAt = now;
    }
  }

  /** What became of a delivery in prepare or a decision. */
  private enum Outcome { SETTLED, DEFERRED, FAILED, READY }

  static long number(Map<String, Object> h, String name) {
    if (h == null) {
      return 0;
    }
    Object v = h.get(name);
    if (v instanceof Long l) {
      return l;
    }
    if (v instanceof Integer i) {
      return i;
    }
    if (v instanceof Short s) {
      return s;
    }
    if (v instanceof Byte b) {
      return b;
    }
    return 0;
  }

  /**
   * Returns a loop of group's member.
   *
   * @param cfg the broker and prefix; validated here
   * @param group the group (its queues are P/group/T; dedup is per handler)
   * @param db opens a connection per transaction
   */
  public RabbitConsumerLoop(RabbitConfig cfg, String group, ConnectionFactory db) {
    this(cfg, group, db, System::currentTimeMillis);
  }

  /** Like {@link #RabbitConsumerLoop(RabbitConfig, String, ConnectionFactory)} with a clock (UTC epoch ms). */
  public RabbitConsumerLoop(RabbitConfig cfg, String group, ConnectionFactory db, LongSupplier clock) {
    cfg.validate();
    String bad = RabbitConfig.checkGroup(group);
    if (bad != null) {
      throw new IllegalArgumentException(bad);
    }
    this.cfg = cfg;
    this.group = group;
    this.db = db;
    this.clock = clock;
  }

  /**
   * Registers handler for spec's event under handlerName, the dedup key's
   * second half: keep it stable across deploys and equal to the Go or Python
   * handler it shares a group and database with.
   */
  public <M extends Message> RabbitConsumerLoop register(EventSpec<M> spec, String handlerName, Handler<M> handler) {
    return register(spec, handlerName, new Consumer<>(spec, handlerName, handler));
  }

  /** Registers a consumer built by the caller (an observer, a tracer, a clock of its own); one per topic and event type. */
  public <M extends Message> RabbitConsumerLoop register(EventSpec<M> spec, String handlerName, Consumer<M> c) {
    if (started) {
      throw new IllegalStateException("rabbitmq: register before run");
    }
    String bad = RabbitConfig.checkTopic(spec.topic());
    if (bad != null) {
      throw new IllegalArgumentException(bad);
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

  /** Retry copies published (and confirmed). */
  public long retried() {
    return retried.get();
  }

  /** Dead letters written (and confirmed). */
  public long deadLettered() {
    return deadLettered.get();
  }

  /** Deliveries sent on through a delay queue because they were not due. */
  public long deferred() {
    return deferred.get();
  }

  /** Deliveries handed back (basic.nack, requeue) because their lease ran out. */
  public long requeued() {
    return requeued.get();
  }

  /** Tests only: the loop's publisher (its connection), null before run. */
  RabbitPublisher publisherForTests() {
    return pub;
  }

  /** True once the loop consumes (its queues exist and basic.consume succeeded). */
  public boolean consuming() {
    Channel ch = channel;
    return ch != null && ch.isOpen();
  }

  /** Stops {@link #run()}: its channel and connection close, unacknowledged deliveries go back to the queues. */
  @Override
  public void close() {
    closed = true;
    inbox.add(WAKE);
  }

  /**
   * Declares the group's queues and consumes until {@link #close()}.
   *
   * @throws RabbitRuntimeException when the broker is unreachable at start or refuses a declaration
   */
  public void run() {
    if (routes.isEmpty()) {
      throw new IllegalStateException("rabbitmq: no handler registered");
    }
    started = true;
    try (RabbitPublisher p = new RabbitPublisher(cfg, clock)) {
      pub = p;
      for (String t : routes.topics()) {
        p.declareGroup(group, t);
        queues.put(p.topology().queue(group, t), t);
      }
      // Creating a quorum queue takes tens of milliseconds, as long as a short retry's whole wait.
      for (int exp = Topology.MIN_EXP; exp <= Topology.PREDECLARE_EXP; exp++) {
        p.declareDelay(group, exp);
      }
      consume();
      while (!closed) {
        Channel ch = channel;
        if (ch == null || !ch.isOpen()) {
          try {
            consume();
          } catch (RabbitRuntimeException e) {
            LOG.log(Level.WARNING, "msgcontract: rabbitmq: consume again failed; trying again in " + cfg.dbRetryMs
                + " ms: " + e.getMessage());
            sleep(cfg.dbRetryMs);
            continue;
          }
        }
        step();
      }
    } finally {
      Channel ch = channel;
      if (ch != null && ch.isOpen()) {
        try {
          ch.close();
        } catch (IOException | TimeoutException | AlreadyClosedException e) {
          // the connection closes next: the broker requeues all the same
        }
      }
    }
  }

  private static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /**
   * Consumes every queue on a new channel. What the old channel held went
   * back to the queues when it closed: its entries are dropped.
   */
  private void consume() {
    Channel old = channel;
    if (old != null) {
      pending.removeIf(e -> e.ch == old);
    }
    Channel ch = pub.newChannel();
    try {
      ch.basicQos(cfg.effectivePrefetch(), false);
      for (Map.Entry<String, String> q : queues.entrySet()) {
        String queue = q.getKey();
        String topic = q.getValue();
        ch.basicConsume(queue, false, queue,
            (tag, d) -> inbox.add(new Entry(ch, d, queue, topic, clock.getAsLong())), tag -> inbox.add(WAKE));
      }
    } catch (IOException | AlreadyClosedException e) {
      try {
        ch.abort();
      } catch (IOException x) {
        e.addSuppressed(x);
      }
      throw new RabbitRuntimeException("rabbitmq: consume the queues of group " + group + " (" + queues.keySet()
          + "): " + e, e);
    }
    ch.addShutdownListener(s -> inbox.add(WAKE));
    channel = ch;
  }

  /** Takes what arrived (waiting until something is due), hands back expired leases, runs what is due. */
  private void step() {
    long now = clock.getAsLong();
    long wait = 200;
    for (Entry e : pending) {
      wait = Math.min(wait, Math.max(Math.max(e.dueAt, dbRetryAt) - now, 0));
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
    if (!(o instanceof Entry e) || closed) {
      return;
    }
    if (e.ch != channel) {
      return; // its channel closed: the broker requeued it
    }
    long now = clock.getAsLong();
    if (e.notBeforeHeader > now) {
      defer(e, e.notBeforeHeader);
      return;
    }
    // Due when taken; one that arrived before its not_before (the loop took
    // it late) was ready at its not_before.
    readyForTests.accept(e.delivered, Math.max(e.receivedAt, e.notBeforeHeader));
    pending.add(e);
  }

  /** Hands back (basic.nack, requeue) each delivery held unsettled longer than its lease. */
  private void expireLeases() {
    long now = clock.getAsLong();
    for (Entry e : new ArrayList<>(pending)) {
      if (now - e.receivedAt >= cfg.leaseMs) {
        pending.remove(e);
        requeued.incrementAndGet();
        LOG.log(Level.WARNING, "msgcontract: rabbitmq: delivery " + e.id + " of " + e.queue + " (attempt "
            + e.attempt + ") held longer than its lease (" + cfg.leaseMs + " ms); handed back to the queue");
        try {
          e.ch.basicNack(e.tag, false, true);
        } catch (IOException | AlreadyClosedException x) {
          // its channel closed: the broker requeued it already
        }
      }
    }
  }

  /**
   * Keeps e from its handler until notBefore: held here when that is under
   * 16 ms away, else sent on, same body and message_id, through the delay
   * queue for the wait and acknowledged after the broker's confirm.
   */
  private void defer(Entry e, long notBefore) {
    long wait = notBefore - clock.getAsLong();
    if (Topology.bucket(wait) < 0) {
      readyForTests.accept(e.delivered, notBefore); // held until then
      e.dueAt = notBefore;
      pending.add(e);
      return;
    }
    pending.remove(e);
    settleAfter(e, pub.publishToGroup(group, e.topic, e.delivered, e.id, notBefore), deferred, "defer");
  }

  /**
   * Acknowledges e once f (its retry, dead letter or deferral) is confirmed
   * and counts it; when f failed, e runs again after dbRetryMs, unacknowledged.
   */
  private void settleAfter(Entry e, CompletableFuture<Void> f, AtomicLong counter, String what) {
    pending.remove(e);
    f.whenComplete((v, x) -> inbox.add((Runnable) () -> {
      if (x == null) {
        counter.incrementAndGet();
        if (counter == retried && crashAfterRetry.test(e.id)) {
          pub.connection().abort(); // no ack: the original comes again
          return;
        }
        ack(e);
        return;
      }
      Throwable cause = x instanceof java.util.concurrent.CompletionException && x.getCause() != null
          ? x.getCause() : x;
      LOG.log(Level.WARNING, "msgcontract: rabbitmq: " + what + " of delivery " + e.id + " not confirmed; it runs"
          + " again in " + cfg.dbRetryMs + " ms: " + pub.failure(cause, what, e.queue).getMessage());
      if (e.ch == channel && !closed) {
        e.dueAt = clock.getAsLong() + cfg.dbRetryMs;
        pending.add(e);
      }
    }));
  }

  private void ack(Entry e) {
    pending.remove(e);
    try {
      e.ch.basicAck(e.tag, false);
    } catch (IOException | AlreadyClosedException x) {
      // The channel closed: the broker delivers it again, and the claims absorb it.
      LOG.log(Level.INFO, "msgcontract: rabbitmq: ack of " + e.id + " failed (" + x
          + "); it is delivered again and deduplicated");
    }
  }

  /**
   * Runs the due deliveries: the steps before the database one by one, the
   * ready ones batchSize at a time (one per biz_key) in shared transactions.
   */
  private void processReady() {
    TransactionBatch.forReady(new ArrayList<>(pending), cfg.batchSize,
        e -> e.dueAt <= clock.getAsLong() && pending.contains(e),
        e -> prepare(e) == Outcome.READY ? e.env.getBizKey() : null,
        batch -> runBatch(batch) != Outcome.FAILED, () -> closed);
  }

  /**
   * The steps of e before the database: decode, route, payload and
   * not_before. A delivery that fails them is dead-lettered; one not due is
   * deferred; one that passes is READY, with its route and envelope in e.
   */
  private Outcome prepare(Entry e) {
    Routes.Prepared p = routes.prepare(e.topic, e.delivered, group, clock.getAsLong());
    if (p instanceof Routes.Dead d) {
      return deadLetter(e, d.handler(), d.env(), d.reason(), d.code(), d.error(), 0);
    }
    if (p instanceof Routes.NotDue n) {
      defer(e, n.notBeforeMs());
      return Outcome.DEFERRED;
    }
    Routes.Ready r = (Routes.Ready) p;
    e.route = r.route();
    e.env = r.env();
    return Outcome.READY;
  }

  /**
   * Runs the database part of ready deliveries (distinct biz_keys) in core's
   * {@link TransactionBatch} (one alone, several in one shared transaction),
   * then carries out each decision: ack, defer, retry or dead letter. FAILED
   * when the database failed (those deliveries run again after dbRetryMs).
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
      defer(e, df.notBeforeMs());
      return;
    }
    if (d instanceof Decision.Retry rt) {
      Envelope next = rt.nextEnvelope();
      settleAfter(e, pub.publishToGroup(group, e.topic, Envelopes.encode(next), RabbitPublisher.newMessageId(),
          next.getNotBefore()), retried, "retry");
      return;
    }
    Decision.DeadLetter dl = (Decision.DeadLetter) d;
    deadLetter(e, e.route.handlerName(), e.env, dl.reason(), dl.code(), dl.error(), dl.attempts());
  }

  /** Publishes e's dead-letter record to P.dlq; e is acknowledged after the confirm. */
  private Outcome deadLetter(Entry e, String handler, Envelope env, String reason, int code, String error,
      int attempts) {
    long now = clock.getAsLong();
    Instant at = Instant.ofEpochMilli(now);
    Instant first = env != null && env.getFirstFailedAt() > 0 ? Instant.ofEpochMilli(env.getFirstFailedAt()) : at;
    DeadLetterRecord r = new DeadLetterRecord(RabbitPublisher.newRecordId(now), e.topic, group, handler,
        env == null ? "" : env.getEventType(), env == null ? "" : env.getBizKey(),
        env == null ? "" : env.getMessageId(), e.delivered, reason, code, error, attempts, first, at, at, 0, null);
    settleAfter(e, pub.storeRecord(r), deadLettered, "dead letter");
    return Outcome.SETTLED;
  }
}
