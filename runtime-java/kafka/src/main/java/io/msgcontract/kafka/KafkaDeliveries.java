package io.msgcontract.kafka;

import com.google.protobuf.Message;
import io.msgcontract.support.Consumer;
import io.msgcontract.support.DecodeException;
import io.msgcontract.support.Decision;
import io.msgcontract.support.Envelopes;
import io.msgcontract.support.EventSpec;
import io.msgcontract.support.LagObserver;
import io.msgcontract.v1.Envelope;
import java.lang.System.Logger.Level;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.header.Header;

/**
 * The deliveries of a Kafka consumer-group member, without its poll loop:
 * what runs generated consumers ({@link Consumer}) with the decisions of
 * runtime-go's kafka transport, so Go, Python and Java members can share one
 * group. {@link KafkaConsumerLoop} polls a KafkaConsumer of its own and feeds
 * it; an integration whose framework owns the consumer (msgcontract's Spring
 * Kafka starter, on Spring's listener container) feeds it the same way:
 * {@link #consumerProperties()} for the consumer, {@link #start()} for the
 * topics to subscribe to, {@link #assigned}, {@link #revoked} and {@link
 * #lost} from the rebalance listener, {@link #polled} after every poll (an
 * empty one too, within {@link #pollWaitMs()}), pause while {@link #full()},
 * and {@link #commit} on stop.
 *
 * <ul>
 *   <li>It reads T and T.retry.&lt;group&gt; for every registered topic T
 *       (under the namespace) and routes a record by the envelope's event
 *       type; records of one biz_key run one at a time, in offset order.
 *   <li>Deliveries run in transactions on connections from the
 *       {@link ConnectionFactory}: dedup claim and handler commit together.
 *       The due heads of up to {@link KafkaConfig#batchSize} keys share one
 *       transaction, each in a savepoint (a failing one rolls back alone),
 *       with one commit, as runtime-go's consumer shares one among a fetch;
 *       a single ready delivery, or batchSize 1, gets one of its own.
 *   <li>A partition's committed offset is its first record whose outcome is
 *       not durable yet (handled, deduplicated, retry published, or dead
 *       letter written, each acknowledged by the database or the broker).
 *       Commits run every commitIntervalMs, at once after a retry or a dead
 *       letter, on revoke and on close. A revoked partition commits what is
 *       done and is let go; a lost one is let go without a commit.
 *   <li>A retryable failure publishes the copy (retry_count+1, not_before =
 *       now + the contract's backoff) to T.retry.&lt;group&gt; with header
 *       msgcontract.topic = T, and the partition goes on. A retry copy not
 *       due yet waits in memory: its offset stays uncommitted and its key
 *       waits, no other key does.
 *   <li>Poison goes to T.dlq with the metadata header msgcontract.dlq, as Go
 *       writes it; `msgcontract dlq list --kafka BROKERS --topic T` reads it.
 *   <li>One retry chain per message (docs/DESIGN.md; {@code
 *       io.msgcontract.support.RetryChain}), as runtime-go's consumer keeps it
 *       on Kafka: a crash or a rebalance between a retry's publish and its
 *       offset commit delivers the failed record again, whose next failure
 *       would publish a second copy of the same attempt. Each record's
 *       delivery id is {@link KafkaRecords#deliveryId}; a retry copy or a
 *       replay is looked up in the business database before its handler runs,
 *       and a failed delivery advances the chain (after its transaction
 *       ended) before its retry or dead letter is published. A copy that
 *       another copy of the message went on without is acknowledged and
 *       counted deduplicated: no retry, no dead letter, no retry counted.
 *   <li>With {@link KafkaConfig#registryUrl} set, a record in the Confluent
 *       wire format (first byte 0) is joined back into its envelope after
 *       the registry confirms its schema id belongs to the event's subject;
 *       an envelope naming no schema_subject or schema_version (a generated
 *       producer's names no version) is given the subject and the version
 *       the id is registered as, a version it names is kept; a foreign or
 *       refused id, a bad frame or a missing
 *       msgcontract.envelope header goes to T.dlq with reason schema (code
 *       -5); a registry that cannot be asked holds the record back a second.
 *   <li>A database failure is not the message's fault: the delivery runs
 *       again after dbRetryMs, no retry counted.
 *   <li>With {@link #withLag}, each poll reports the lag of every partition
 *       it returned records of (the partition's high watermark minus the
 *       offset after the last record returned) as runtime-go does:
 *       {@code msgcontract_consumer_lag_messages{group,topic,partition}}
 *       through {@code io.msgcontract.observe.PrometheusMetrics}. A
 *       partition let go is forgotten; its next owner reports it.
 * </ul>
 *
 * <p>Not thread-safe: the consumer's thread calls it, and runs the handlers
 * in {@link #polled}; only {@link #stop()} may come from another thread.
 */
public final class KafkaDeliveries implements AutoCloseable {
  /** The code of a message with no handler for its event type, as in the Go runtime. */
  public static final int CODE_NO_HANDLER = -4;
  /** The code of a framed record the schema registry check turned down, as in the Go runtime. */
  public static final int CODE_SCHEMA = -5;
  /** How long a framed record waits when the registry could not be asked. */
  static final long REGISTRY_RETRY_MS = 1000;

  private static final System.Logger LOG = System.getLogger(KafkaDeliveries.class.getName());

  private final KafkaConfig cfg;
  private final String group;
  private final ConnectionFactory db;
  private final LongSupplier clock;
  private final Map<String, Map<String, Route<?>>> routes = new LinkedHashMap<>();
  private final Map<String, String> origin = new HashMap<>(); // Kafka topic -> the user's topic
  private volatile boolean closed;
  private org.apache.kafka.clients.consumer.Consumer<?, ?> consumer; // the one that polled; commits
  private KafkaPublisher pub;
  private long lastCommit;
  private LagObserver lag = LagObserver.NONE;

  private final Map<TopicPartition, Part> parts = new HashMap<>();
  private final Map<String, ArrayDeque<Entry>> keys = new LinkedHashMap<>();
  private int buffered;
  private long dbRetryAt;

  private final AtomicLong handled = new AtomicLong();
  private final AtomicLong deduplicated = new AtomicLong();
  private final AtomicLong retried = new AtomicLong();
  private final AtomicLong deadLettered = new AtomicLong();

  /**
   * Tests only: asked with a delivery's id once its retry copy is published,
   * before the delivery is settled. True acts out a crash in between: the
   * delivery is neither settled nor committed and runs again, as a crashed
   * member's record is delivered again to the partition's next owner.
   */
  java.util.function.Predicate<String> crashAfterRetry = id -> false;

  private record Route<M extends Message>(EventSpec<M> spec, String handlerName, Consumer<M> consumer) {}

  private static final class Part {
    final TopicPartition tp;
    final ArrayDeque<Entry> q = new ArrayDeque<>();
    long next = -1;
    long committed = -1;

    Part(TopicPartition tp) {
      this.tp = tp;
    }
  }

  private static final class Entry {
    final ConsumerRecord<byte[], byte[]> rec;
    final Part part;
    final String key;
    final String topic; // the user's topic
    boolean settled;
    long dueAt;
    // Set by prepare when the delivery is READY: what the database part needs.
    Route<?> route;
    Envelope env;
    byte[] body;

    Entry(ConsumerRecord<byte[], byte[]> rec, Part part, String key, String topic) {
      this.rec = rec;
      this.part = part;
      this.key = key;
      this.topic = topic;
    }

    /** The id of the stored copy, the same on each of its redeliveries: its retry chain's delivery id. */
    String deliveryId() {
      return KafkaRecords.deliveryId(rec);
    }
  }

  /**
   * What became of a delivery: settled (its offset may be committed), deferred
   * (dueAt set), failed (the database or the broker failed: it runs again after
   * dbRetryMs), or, from prepare, ready for the database part.
   */
  private enum Outcome { SETTLED, DEFERRED, FAILED, READY }

  /**
   * Returns the deliveries of a member of group.
   *
   * @param cfg the cluster; validated here
   * @param group the consumer group (dedup is per handler, the group names offsets and retry topics)
   * @param db opens a connection per transaction
   * @param clock the time, UTC epoch ms
   */
  public KafkaDeliveries(KafkaConfig cfg, String group, ConnectionFactory db, LongSupplier clock) {
    cfg.validate();
    if (group == null || group.isEmpty()) {
      throw new IllegalArgumentException("kafka: the consumer needs a group");
    }
    this.cfg = cfg;
    this.group = group;
    this.db = db;
    this.clock = clock;
  }

  /**
   * Registers c for spec's event under handlerName, the dedup key's second
   * half: keep it stable across deploys and equal to the Go or Python
   * handler it shares a group and database with. One per topic and event
   * type, before {@link #start()}.
   *
   * @param <M> the event's message
   * @param spec the event
   * @param handlerName the handler's name
   * @param c the consumer running the handler
   * @return this
   */
  public <M extends Message> KafkaDeliveries register(EventSpec<M> spec, String handlerName, Consumer<M> c) {
    if (pub != null) {
      throw new IllegalStateException("kafka: register before start");
    }
    Map<String, Route<?>> byType = routes.computeIfAbsent(spec.topic(), t -> new HashMap<>());
    if (byType.containsKey(spec.eventType())) {
      throw new IllegalArgumentException("kafka: a handler for " + spec.eventType() + " on " + spec.topic()
          + " is registered already");
    }
    byType.put(spec.eventType(), new Route<>(spec, handlerName, c));
    return this;
  }

  /**
   * Reports consumer lag to lag, for example an {@code io.msgcontract.observe.PrometheusMetrics};
   * the default reports nothing.
   *
   * @param lag where to report, null for nowhere
   * @return this
   */
  public KafkaDeliveries withLag(LagObserver lag) {
    if (pub != null) {
      throw new IllegalStateException("kafka: withLag before start");
    }
    this.lag = lag == null ? LagObserver.NONE : lag;
    return this;
  }

  /**
   * Returns the group's Kafka name (the namespace applied).
   *
   * @return the group.id a member uses
   */
  public String groupId() {
    return new Topics(cfg).group(group);
  }

  /**
   * Returns what a member's KafkaConsumer must be configured with to share
   * the group with Go, Python and Java members: {@link KafkaConfig#base()}
   * (brokers, security), group.id, no auto-commit (the committed offset is
   * the first record not settled), earliest, read_uncommitted, franz-go's
   * cooperative-sticky assignor, the session timeout and its heartbeat,
   * max.poll.records and fetch.max.wait.ms. Byte-array deserializers are
   * the caller's.
   *
   * @return new properties
   */
  public Properties consumerProperties() {
    Properties p = cfg.base();
    p.put("group.id", groupId());
    p.put("enable.auto.commit", "false");
    p.put("auto.offset.reset", "earliest");
    p.put("isolation.level", "read_uncommitted");
    // franz-go's default balancer: cooperative-sticky, so Go and Java members agree on one protocol.
    p.put("partition.assignment.strategy", CooperativeStickyAssignor.class.getName());
    p.put("session.timeout.ms", Integer.toString(cfg.sessionTimeoutMs));
    p.put("heartbeat.interval.ms", Integer.toString(Math.max(cfg.sessionTimeoutMs / 10, 100)));
    p.put("max.poll.records", Integer.toString(Math.min(500, cfg.maxBuffered)));
    p.put("fetch.max.wait.ms", "500");
    return p;
  }

  /**
   * Opens the publisher of retry copies and dead letters, creates the topics
   * the group needs (T, T.retry.&lt;group&gt;, T.dlq, T.dlq.ops) when
   * createTopics is on, and returns the topics to subscribe to.
   *
   * @return T and T.retry.&lt;group&gt; of every registered topic T, as Kafka names them
   * @throws KafkaRuntimeException when the cluster is unreachable or a topic is missing
   */
  public List<String> start() {
    if (routes.isEmpty()) {
      throw new IllegalStateException("kafka: no handler registered");
    }
    if (pub != null) {
      throw new IllegalStateException("kafka: started already");
    }
    KafkaPublisher p = new KafkaPublisher(cfg);
    List<String> names = new ArrayList<>();
    try {
      Topics topics = p.topics();
      for (String t : routes.keySet()) {
        topics.ensure(topics.subscriptionTopics(group, t));
        names.add(topics.topic(t));
        names.add(topics.retry(group, t));
        origin.put(topics.topic(t), t);
        origin.put(topics.retry(group, t), t);
      }
    } catch (RuntimeException x) {
      p.close();
      throw x;
    }
    pub = p;
    lastCommit = clock.getAsLong();
    return names;
  }

  /** Deliveries whose handler committed. @return the count */
  public long handled() {
    return handled.get();
  }

  /** Deliveries acknowledged as duplicates. @return the count */
  public long deduplicated() {
    return deduplicated.get();
  }

  /** Retry copies published. @return the count */
  public long retried() {
    return retried.get();
  }

  /** Dead letters written. @return the count */
  public long deadLettered() {
    return deadLettered.get();
  }

  /**
   * Asks a {@link #polled} running in another thread to return after the
   * transaction in progress; from any thread. What is settled stays
   * settled; commit it with {@link #commit}.
   */
  public void stop() {
    closed = true;
  }

  /** Closes the publisher; the caller commits first ({@link #commit}). */
  @Override
  public void close() {
    closed = true;
    KafkaPublisher p = pub;
    if (p != null) {
      p.close();
    }
  }

  /**
   * Takes the records of one poll (none too: what became due runs), then
   * runs the due deliveries until none is left or commitIntervalMs passed,
   * reports lag of the partitions polled, and commits every partition's
   * settled prefix once commitIntervalMs passed since the last commit.
   *
   * @param c the consumer that polled them, which commits
   * @param recs the records, in the order polled
   */
  public void polled(org.apache.kafka.clients.consumer.Consumer<?, ?> c,
      Iterable<ConsumerRecord<byte[], byte[]>> recs) {
    if (pub == null) {
      throw new IllegalStateException("kafka: start before polled");
    }
    consumer = c;
    Set<TopicPartition> seen = lag == LagObserver.NONE ? null : new HashSet<>();
    for (ConsumerRecord<byte[], byte[]> r : recs) {
      add(r);
      if (seen != null) {
        seen.add(new TopicPartition(r.topic(), r.partition()));
      }
    }
    if (seen != null) {
      reportLag(c, seen);
    }
    processReady(pub);
    if (clock.getAsLong() - lastCommit >= cfg.commitIntervalMs) {
      commitParts(null);
      lastCommit = clock.getAsLong();
    }
  }

  /**
   * True when the records buffered reached maxBuffered: pause fetching until
   * it turns false.
   *
   * @return whether to pause
   */
  public boolean full() {
    return buffered >= cfg.maxBuffered;
  }

  /**
   * Returns how long the next poll may wait: until the first record waiting
   * for its not_before (or the database's retry) is due, at most 500 ms.
   *
   * @return milliseconds, 0 when something is due
   */
  public long pollWaitMs() {
    return pollWait();
  }

  /**
   * Commits every partition's settled prefix that moved since its last
   * commit: on stop, before the consumer closes.
   *
   * @param c the consumer
   */
  public void commit(org.apache.kafka.clients.consumer.Consumer<?, ?> c) {
    consumer = c;
    commitParts(null);
    lastCommit = clock.getAsLong();
  }

  /**
   * Partitions assigned to this member (from the rebalance listener).
   *
   * @param tps the partitions
   */
  public void assigned(Collection<TopicPartition> tps) {
    for (TopicPartition tp : tps) {
      parts.putIfAbsent(tp, new Part(tp));
    }
  }

  /**
   * Partitions revoked (from the rebalance listener, before the consumer
   * lets them go): their settled prefix is committed, their records dropped;
   * the next owner reads the rest from the committed offset.
   *
   * @param c the consumer
   * @param tps the partitions
   */
  public void revoked(org.apache.kafka.clients.consumer.Consumer<?, ?> c, Collection<TopicPartition> tps) {
    consumer = c;
    try {
      commitParts(tps);
    } catch (WakeupException x) {
      closed = true;
    }
    release(tps);
  }

  /**
   * Partitions lost (the session expired): dropped without a commit.
   *
   * @param tps the partitions
   */
  public void lost(Collection<TopicPartition> tps) {
    release(tps);
  }

  /** Sets the lag of each partition polled: its high watermark minus the position after the records. */
  private void reportLag(org.apache.kafka.clients.consumer.Consumer<?, ?> c, Set<TopicPartition> polled) {
    for (TopicPartition tp : polled) {
      if (!parts.containsKey(tp)) {
        continue;
      }
      OptionalLong n = c.currentLag(tp); // from the last fetch's high watermark, no request
      if (n.isPresent()) {
        lag.lag(group, tp.topic(), tp.partition(), Math.max(n.getAsLong(), 0));
      }
    }
  }

  private long pollWait() {
    long now = clock.getAsLong();
    long next = now + 500;
    if (dbRetryAt > now) {
      next = Math.min(next, dbRetryAt);
    }
    for (ArrayDeque<Entry> kq : keys.values()) {
      Entry e = kq.peekFirst();
      if (e != null) {
        next = Math.min(next, Math.max(e.dueAt, now));
      }
    }
    return Math.max(next - now, 0);
  }

  private void add(ConsumerRecord<byte[], byte[]> r) {
    Part part = parts.get(new TopicPartition(r.topic(), r.partition()));
    if (part == null) {
      return; // not ours (any more): its next owner reads it from the committed offset
    }
    String key = r.key() == null || r.key().length == 0
        ? "\0" + r.topic() + "/" + r.partition() + "/" + r.offset() // no key, no order to keep
        : new String(r.key(), StandardCharsets.UTF_8);
    String topic = origin.get(r.topic());
    Header h = r.headers().lastHeader(Topics.HEADER_TOPIC);
    if (h != null) {
      topic = new String(h.value(), StandardCharsets.UTF_8);
    }
    Entry e = new Entry(r, part, key, topic);
    part.q.addLast(e);
    buffered++;
    keys.computeIfAbsent(key, k -> new ArrayDeque<>()).addLast(e);
  }

  /**
   * Runs due key heads until none is left or commitIntervalMs has passed:
   * the steps before the database one by one, the ready ones batchSize at a
   * time in shared transactions (runBatch). Then the loop polls again, so a
   * rebalance waits for one batch at most, not for everything buffered.
   */
  private void processReady(KafkaPublisher pub) {
    long until = clock.getAsLong() + cfg.commitIntervalMs;
    boolean progress = true;
    while (progress && !closed) {
      progress = false;
      if (clock.getAsLong() < dbRetryAt) {
        return;
      }
      List<Entry> ready = new ArrayList<>();
      for (ArrayDeque<Entry> kq : new ArrayList<>(keys.values())) {
        if (clock.getAsLong() >= until || closed) {
          break;
        }
        Entry e = kq.peekFirst();
        if (e == null || e.settled || e.dueAt > clock.getAsLong()) {
          continue;
        }
        Outcome o = prepare(pub, e);
        if (o == Outcome.READY) {
          ready.add(e);
          if (ready.size() < cfg.batchSize) {
            continue;
          }
          // A full batch runs here rather than ending the pass, so that the
          // keys after it in keys' order get their turn: a new pass starts
          // from the first key again, and busy keys would keep the rest out.
          o = runBatch(pub, ready); // settles what it settled, e or not
          ready.clear();
          if (o == Outcome.FAILED) {
            dbRetryAt = clock.getAsLong() + cfg.dbRetryMs;
            return;
          }
          progress = progress || o == Outcome.SETTLED;
          continue;
        }
        if (o == Outcome.FAILED) {
          dbRetryAt = clock.getAsLong() + cfg.dbRetryMs;
          return;
        }
        if (o == Outcome.SETTLED) {
          settle(e);
          progress = true;
        }
      }
      if (!ready.isEmpty()) {
        Outcome o = runBatch(pub, ready);
        if (o == Outcome.FAILED) {
          dbRetryAt = clock.getAsLong() + cfg.dbRetryMs;
          return;
        }
        progress = progress || o == Outcome.SETTLED;
      }
      if (clock.getAsLong() >= until) {
        return;
      }
    }
  }

  /**
   * Runs the database part of ready deliveries (distinct keys): one alone in
   * a transaction of its own, several in one shared transaction, each in a
   * savepoint (Consumer.processShared), committed once; before that shared
   * transaction, the retry copies and replays among them are looked up in
   * their retry chains, and a superseded one is settled as a duplicate. After
   * the transaction ended, a failed delivery advances its chain (in
   * Pending.committed, or inside Consumer.process), which may turn its retry
   * or dead letter into a duplicate. Every delivery settled or deferred is
   * dealt with here; the result is FAILED when the database failed (the whole
   * batch, or a delivery whose chain could not be advanced, is handed back)
   * or a retry or dead letter could not be published (that delivery runs
   * again), SETTLED when any delivery settled, else DEFERRED.
   */
  private Outcome runBatch(KafkaPublisher pub, List<Entry> ready) {
    // Settled without a transaction: superseded at the look-up.
    List<Entry> early = new ArrayList<>();
    List<Decision> earlyDecisions = new ArrayList<>();
    // Decided in the transaction (and the chain's advance after it).
    List<Entry> late = new ArrayList<>(ready.size());
    List<Decision> lateDecisions = new ArrayList<>(ready.size());
    Outcome result = Outcome.DEFERRED;
    try (Connection c = db.open()) {
      if (ready.size() == 1) {
        Entry e = ready.get(0);
        lateDecisions.add(runAlone(c, e));
        late.add(e);
      } else {
        List<Entry> shared = new ArrayList<>(ready.size());
        for (Entry e : ready) {
          Decision d = e.route.consumer().superseded(c, e.env, e.deliveryId());
          if (d == null) {
            shared.add(e);
          } else {
            early.add(e);
            earlyDecisions.add(d);
          }
        }
        if (!shared.isEmpty()) {
          List<Consumer.Pending> pending = Consumer.processBatch(c,
              shared.stream().map(e -> new Consumer.BatchItem(e.route.consumer(), e.body, e.deliveryId())).toList());
          for (int i = 0; i < shared.size(); i++) {
            Entry e = shared.get(i);
            try {
              lateDecisions.add(pending.get(i).committed());
              late.add(e);
            } catch (SQLException x) {
              LOG.log(Level.WARNING, "msgcontract: database failure, message handed back: step=advance retry chain"
                  + " transport_id=" + e.deliveryId() + " delay_ms=" + cfg.dbRetryMs + " error=" + x);
              result = Outcome.FAILED;
            }
          }
        }
      }
    } catch (SQLException x) {
      LOG.log(Level.WARNING, "msgcontract: database failed; " + (ready.size() == 1 ? "the delivery runs"
          : "the " + ready.size() + " deliveries of the transaction run") + " again: " + x);
      result = Outcome.FAILED;
      late.clear();
      lateDecisions.clear();
    }
    early.addAll(late);
    earlyDecisions.addAll(lateDecisions);
    for (int i = 0; i < early.size(); i++) {
      Entry e = early.get(i);
      Outcome o = decided(pub, e, earlyDecisions.get(i));
      if (o == Outcome.SETTLED) {
        settle(e);
      }
      if (o == Outcome.FAILED || result == Outcome.FAILED) {
        result = Outcome.FAILED; // the others are settled all the same: their effects committed
      } else if (o == Outcome.SETTLED) {
        result = Outcome.SETTLED;
      }
    }
    return result;
  }

  /**
   * Runs e in a transaction of its own on c (Consumer.process, which also
   * looks a retry copy up before it and advances the chain after a failure);
   * a failure rolls it back and hands e back (SQLException).
   */
  private static Decision runAlone(Connection c, Entry e) throws SQLException {
    c.setAutoCommit(false);
    try {
      return e.route.consumer().process(c, e.body, e.deliveryId());
    } catch (SQLException | RuntimeException x) {
      // A failed commit can leave the transaction open; what close does
      // with it is the driver's choice, so it is rolled back here.
      try {
        c.rollback();
      } catch (SQLException r) {
        x.addSuppressed(r);
      }
      throw x;
    }
  }

  private Route<?> lookup(String topic, String eventType) {
    Map<String, Route<?>> m = routes.get(topic);
    return m == null ? null : m.get(eventType);
  }

  /**
   * The steps of e before the database: unframe, decode, route, payload and
   * not_before. A record that fails them is dead-lettered (SETTLED or FAILED)
   * or waits (DEFERRED); one that passes is READY, with its route, envelope
   * and body in e.
   */
  private Outcome prepare(KafkaPublisher pub, Entry e) {
    byte[] body = e.rec.value() == null ? new byte[0] : e.rec.value();
    long now = clock.getAsLong();
    if (Wire.isFramed(body)) {
      Header h = e.rec.headers().lastHeader(Wire.HEADER_ENVELOPE);
      try {
        body = Wire.unframe(pub.registry(), body, h == null ? null : h.value(), e.topic);
      } catch (Wire.SchemaException x) {
        return deadLetter(pub, e, new DeadLetters.Meta(e.topic, group, "", x.env, "schema", CODE_SCHEMA,
            x.getMessage(), 0, now), body);
      } catch (SchemaRegistry.UnavailableException x) {
        LOG.log(Level.WARNING, "msgcontract: schema registry unavailable; the record waits: " + x.getMessage());
        e.dueAt = now + REGISTRY_RETRY_MS;
        return Outcome.DEFERRED;
      }
    }
    Envelope env;
    try {
      env = Envelopes.decode(body);
    } catch (DecodeException x) {
      return deadLetter(pub, e, new DeadLetters.Meta(e.topic, group, "", null, "decode", Consumer.CODE_DECODE,
          String.valueOf(x.getMessage()), 0, now), body);
    }
    // The topic it was delivered from decides; the envelope's own topic is the fallback.
    String topic = e.topic;
    Route<?> r = lookup(topic, env.getEventType());
    if (r == null && !env.getTopic().isEmpty() && !env.getTopic().equals(topic)) {
      topic = env.getTopic();
      r = lookup(topic, env.getEventType());
    }
    if (r == null) {
      return deadLetter(pub, e, new DeadLetters.Meta(e.topic, group, "", env, "no_handler", CODE_NO_HANDLER,
          "no handler for event type \"" + env.getEventType() + "\" on topic \"" + topic + "\" in group \""
              + group + "\"", 0, now), body);
    }
    try {
      Envelopes.payload(r.spec(), env);
    } catch (DecodeException x) {
      return deadLetter(pub, e, new DeadLetters.Meta(e.topic, group, r.handlerName(), env, "decode",
          Consumer.CODE_DECODE, String.valueOf(x.getMessage()), 0, now), body);
    }
    if (env.getNotBefore() > now) {
      e.dueAt = env.getNotBefore();
      return Outcome.DEFERRED;
    }
    e.route = r;
    e.env = env;
    e.body = body;
    return Outcome.READY;
  }

  /**
   * Acts on the decision taken for e in a committed transaction: counts an
   * acknowledgement, defers, or publishes the retry or the dead letter.
   */
  private Outcome decided(KafkaPublisher pub, Entry e, Decision d) {
    Route<?> r = e.route;
    Envelope env = e.env;
    try {
      if (d instanceof Decision.Ack a) {
        (a.deduplicated() ? deduplicated : handled).incrementAndGet();
        return Outcome.SETTLED;
      }
      if (d instanceof Decision.Defer df) {
        e.dueAt = df.notBeforeMs();
        return Outcome.DEFERRED;
      }
      if (d instanceof Decision.Retry rt) {
        pub.send(KafkaRecords.retry(cfg.namespace, group, e.topic, rt));
        retried.incrementAndGet();
        if (crashAfterRetry.test(e.deliveryId())) {
          e.dueAt = clock.getAsLong() + cfg.dbRetryMs;
          return Outcome.DEFERRED;
        }
        settle(e);
        commitNow(e);
        return Outcome.SETTLED;
      }
      Decision.DeadLetter dl = (Decision.DeadLetter) d;
      return deadLetter(pub, e, new DeadLetters.Meta(e.topic, group, r.handlerName(), env, dl.reason(), dl.code(),
          dl.error(), dl.attempts(), clock.getAsLong()), e.body);
    } catch (KafkaRuntimeException x) {
      LOG.log(Level.WARNING, "msgcontract: retry publish failed; the delivery runs again: " + x.getMessage());
      return Outcome.FAILED;
    }
  }

  private Outcome deadLetter(KafkaPublisher pub, Entry e, DeadLetters.Meta m, byte[] body) {
    try {
      pub.send(DeadLetters.record(pub.topics().dlq(m.topic()), m, body));
    } catch (KafkaRuntimeException x) {
      LOG.log(Level.WARNING, "msgcontract: dead-letter failed; the delivery runs again: " + x.getMessage());
      return Outcome.FAILED;
    }
    deadLettered.incrementAndGet();
    settle(e);
    commitNow(e);
    return Outcome.SETTLED;
  }

  /** Marks e done: its key's next record may go, its partition's commit point moves past the settled prefix. */
  private void settle(Entry e) {
    if (e.settled) {
      return;
    }
    e.settled = true;
    e.route = null; // the unframed body may be large; the record stays until the commit point passes it
    e.env = null;
    e.body = null;
    unkey(e);
    Part p = e.part;
    while (!p.q.isEmpty() && p.q.peekFirst().settled) {
      p.next = p.q.pollFirst().rec.offset() + 1;
      buffered--;
    }
  }

  private void unkey(Entry e) {
    ArrayDeque<Entry> kq = keys.get(e.key);
    if (kq != null) {
      kq.remove(e);
      if (kq.isEmpty()) {
        keys.remove(e.key);
      }
    }
  }

  /** Retries and dead letters are rare and costly to re-run: their offsets do not wait for the interval. */
  private void commitNow(Entry e) {
    if (parts.get(e.part.tp) == e.part) {
      commitParts(Set.of(e.part.tp));
    }
  }

  /** Commits the commit points of only (every partition when null) that moved since their last commit. */
  private void commitParts(Collection<TopicPartition> only) {
    Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
    List<Part> moved = new ArrayList<>();
    for (Part p : parts.values()) {
      if ((only == null || only.contains(p.tp)) && p.next > p.committed) {
        offsets.put(p.tp, new OffsetAndMetadata(p.next));
        moved.add(p);
      }
    }
    if (offsets.isEmpty()) {
      return;
    }
    try {
      consumer.commitSync(offsets, Duration.ofMillis(cfg.connectTimeoutMs));
      for (Part p : moved) {
        p.committed = Math.max(p.committed, offsets.get(p.tp).offset());
      }
    } catch (WakeupException x) {
      throw x;
    } catch (KafkaException x) {
      LOG.log(Level.WARNING, "msgcontract: kafka commit failed; the records will be redelivered and deduplicated: "
          + x);
    }
  }

  /** Drops the partitions' records; their next owner reads them from the committed offset. */
  private void release(Collection<TopicPartition> tps) {
    for (TopicPartition tp : tps) {
      Part p = parts.remove(tp);
      if (p == null) {
        continue;
      }
      lag.forget(group, tp.topic(), tp.partition()); // another member reports it now
      for (Entry e : p.q) {
        if (!e.settled) {
          unkey(e);
        }
      }
      buffered -= p.q.size();
      p.q.clear();
    }
  }
}
