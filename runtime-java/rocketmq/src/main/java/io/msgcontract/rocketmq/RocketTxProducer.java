package io.msgcontract.rocketmq;

import io.msgcontract.support.ConnectionFactory;
import io.msgcontract.support.DecodeException;
import io.msgcontract.support.Envelopes;
import io.msgcontract.support.TxCheck;
import io.msgcontract.v1.Envelope;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.ByteBuffer;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiConsumer;
import java.util.function.LongSupplier;
import org.apache.rocketmq.client.apis.ClientException;
import org.apache.rocketmq.client.apis.ClientServiceProvider;
import org.apache.rocketmq.client.apis.message.Message;
import org.apache.rocketmq.client.apis.message.MessageView;
import org.apache.rocketmq.client.apis.producer.Producer;
import org.apache.rocketmq.client.apis.producer.Transaction;
import org.apache.rocketmq.client.apis.producer.TransactionResolution;

/**
 * Publishes an event together with a business transaction through
 * RocketMQ's transactional (half) messages, the outbox's alternative (core's
 * {@link TxCheck}, docs/rocketmq.md): {@link #send} stores the message as a
 * half message the broker withholds from consumers, runs the business work
 * and records the message id in msg_tx_check in one database transaction,
 * commits it, and then commits the half message. When that verdict does not
 * reach the broker (a crash, a lost request), the broker asks a producer of
 * the topic again, and this producer answers from msg_tx_check: COMMIT when
 * the row is there, UNKNOWN while the half message is younger than the
 * unresolved window, ROLLBACK after it.
 *
 * <p>The message is the one {@link RocketPublisher} sends (the envelope as
 * the body, MSGCONTRACT_TOPIC, the keys biz_key and message_id, the event
 * type as the tag), so consumers cannot tell the two apart. Its RocketMQ
 * topic must have message type TRANSACTION (the proxy refuses a half message
 * to a NORMAL topic): a runtime-go member with {@code
 * Config.TransactionTopics} creates it, or {@code mqadmin updateTopic -a
 * +message.type=TRANSACTION}; a FIFO topic ({@link RocketConfig#fifoTopics})
 * is refused. The business database needs msg_tx_check
 * ({@link TxCheck#migrate}); a send prunes its old rows ({@link TxCheck#prune})
 * at most once an hour. Thread-safe; the check-backs run on the client's
 * threads.
 */
public final class RocketTxProducer implements AutoCloseable {
  private static final System.Logger LOG = System.getLogger(RocketTxProducer.class.getName());
  private static final long PRUNE_INTERVAL_MS = 3_600_000;

  /** The business effect of a send, run in the business transaction tx, which the producer commits. */
  @FunctionalInterface
  public interface Work {
    /** Writes the business change in tx; an exception rolls it and the message back. */
    void run(Connection tx) throws Exception;
  }

  /** Tests only: where {@link #send} acts out a crash, leaving the half message without a verdict. */
  enum Crash {
    /** No crash. */
    NONE,
    /** After the database commit: the check-back must answer COMMIT. */
    AFTER_DB_COMMIT,
    /** After the work, with the database rolled back: the check-back must answer ROLLBACK after the window. */
    AFTER_DB_ROLLBACK
  }

  private final RocketConfig cfg;
  private final ConnectionFactory db;
  private final long unresolvedMs;
  private final LongSupplier clock;
  private final Set<String> topics;
  private final ClientServiceProvider provider;
  private final Producer producer;
  private final AtomicLong lastPruneMs = new AtomicLong(Long.MIN_VALUE);

  /** Tests only: a crash {@link #send} acts out. */
  volatile Crash crashForTests = Crash.NONE;
  /** Tests only: told of each check-back's message id and answer. */
  volatile BiConsumer<String, TxCheck.Answer> checkedForTests = (id, a) -> {};

  /**
   * Returns a producer connected to cfg's proxy with the default unresolved
   * window ({@link TxCheck#DEFAULT_UNRESOLVED_MS}).
   *
   * @param cfg the proxy and namespace; validated here
   * @param db opens a connection to the business database per send and per check-back
   * @param topics the msgcontract topics it sends to: the proxy asks a producer that named a topic about its
   *     unresolved half messages, so one started after a crash answers at once
   * @throws IllegalArgumentException naming each invalid argument
   * @throws RocketRuntimeException when the proxy cannot be reached
   */
  public RocketTxProducer(RocketConfig cfg, ConnectionFactory db, String... topics) {
    this(cfg, db, TxCheck.DEFAULT_UNRESOLVED_MS, System::currentTimeMillis, topics);
  }

  /**
   * Like {@link #RocketTxProducer(RocketConfig, ConnectionFactory, String...)}
   * with the unresolved window and a clock (UTC epoch ms). Keep the window
   * above twice the business transaction's longest time (a send past half of
   * it rolls back) and under the broker's transactionCheckMax ×
   * transactionCheckInterval (the broker discards a half message it asked
   * about that often).
   */
  public RocketTxProducer(RocketConfig cfg, ConnectionFactory db, long unresolvedMs, LongSupplier clock,
      String... topics) {
    validate(cfg, db, unresolvedMs, clock, topics);
    this.cfg = cfg;
    this.db = db;
    this.unresolvedMs = unresolvedMs;
    this.clock = clock;
    this.topics = Set.of(topics);
    this.provider = ClientServiceProvider.loadService();
    String[] names = new String[topics.length];
    for (int i = 0; i < topics.length; i++) {
      names[i] = cfg.topicName(topics[i]);
    }
    try {
      this.producer = provider.newProducerBuilder().setClientConfiguration(RocketPublisher.clientConfiguration(cfg))
          .setTopics(names).setTransactionChecker(this::check).build();
    } catch (ClientException e) {
      throw RocketPublisher.startFailure(cfg, e);
    }
  }

  /** Reports every invalid argument at once. */
  private static void validate(RocketConfig cfg, ConnectionFactory db, long unresolvedMs, LongSupplier clock,
      String[] topics) {
    List<String> errs = new ArrayList<>();
    if (cfg == null) {
      errs.add("rocketmq: cfg is null");
    } else {
      try {
        cfg.validate();
      } catch (IllegalArgumentException e) {
        errs.add(e.getMessage());
      }
    }
    if (db == null) {
      errs.add("rocketmq: db is null (a ConnectionFactory of the business database, which holds msg_tx_check)");
    }
    if (unresolvedMs <= 0) {
      errs.add("rocketmq: unresolvedMs " + unresolvedMs + " must be positive (default TxCheck.DEFAULT_UNRESOLVED_MS)");
    }
    if (clock == null) {
      errs.add("rocketmq: clock is null (System::currentTimeMillis)");
    }
    if (topics == null || topics.length == 0) {
      errs.add("rocketmq: no topics: name the msgcontract topics the producer sends to");
    } else {
      for (String t : topics) {
        if (t == null || t.isEmpty()) {
          errs.add("rocketmq: topics has an empty topic");
        } else if (cfg != null && cfg.fifoTopics != null && cfg.fifoTopics.contains(t)) {
          errs.add("rocketmq: topic " + t + " is one of cfg.fifoTopics: a RocketMQ topic has one message type, and a"
              + " FIFO topic takes no transactional (half) messages; publish its events through the outbox"
              + " (RocketPublisher), or send to a TRANSACTION topic");
        }
      }
    }
    if (!errs.isEmpty()) {
      throw new IllegalArgumentException(String.join("; ", errs));
    }
  }

  /**
   * Publishes env to msgcontract topic topic exactly when work's business
   * transaction commits: sends env as a half message, runs work and records
   * the message id in one database transaction, commits it, then commits the
   * half message. The database transaction commits only while less than half
   * the unresolved window has passed since the half message was sent
   * ({@link TxCheck#deadline}); past it, both are rolled back.
   *
   * <p>A failing verdict after the database commit is logged, not thrown: the
   * broker's check-back commits the message.
   *
   * @throws IllegalArgumentException when an argument is missing (env without a message id)
   * @throws RocketRuntimeException when the half message was not stored, the work failed (a checked exception,
   *     wrapped), the deadline passed (database and message rolled back), or the database commit failed (the
   *     message then left to the check-back, which commits it if the commit landed)
   * @throws RuntimeException what work threw, after both were rolled back
   */
  public void send(String topic, Envelope env, Work work) {
    List<String> errs = new ArrayList<>();
    if (topic == null || !topics.contains(topic)) {
      errs.add("rocketmq: send: topic " + topic + " is not one of the producer's topics " + topics);
    }
    if (env == null || env.getMessageId().isEmpty()) {
      errs.add("rocketmq: send: the envelope " + (env == null ? "is null" : "has no message id")
          + " (build it with Envelopes.newEnvelope)");
    }
    if (work == null) {
      errs.add("rocketmq: send: work is null");
    }
    if (!errs.isEmpty()) {
      throw new IllegalArgumentException(String.join("; ", errs));
    }
    String id = env.getMessageId();
    String name = cfg.topicName(topic);
    Message msg = RocketPublisher.eventMessage(provider, cfg, topic, env, Envelopes.encode(env)).build();
    pruneIfDue();
    long stored = clock.getAsLong(); // just before the send: the deadline errs early
    Transaction half;
    try {
      half = producer.beginTransaction();
      producer.send(msg, half);
    } catch (ClientException | RuntimeException e) {
      // Stored or not, no row will be: the check-back rolls it back after the window.
      throw RocketPublisher.failure(e, "send the half message " + id, name);
    }
    if (!commitBusiness(topic, id, stored, work, half) || crashForTests == Crash.AFTER_DB_COMMIT) {
      return;
    }
    try {
      half.commit();
    } catch (ClientException | RuntimeException e) {
      LOG.log(Level.WARNING, "msgcontract: rocketmq: commit of half message " + id + " to " + name + " failed (" + e
          + "); the business transaction committed, so the broker's check-back commits it");
    }
  }

  /**
   * Runs work and records id in one database transaction and commits it
   * before the deadline; rolls it and the half message back when that fails.
   * False: a crash acted out for tests, nothing committed.
   */
  private boolean commitBusiness(String topic, String id, long stored, Work work, Transaction half) {
    Connection c;
    try {
      c = db.open();
    } catch (SQLException | RuntimeException e) {
      rollBackHalf(half, id, e);
      throw new RocketRuntimeException("rocketmq: open the business database for message " + id + ": " + e
          + "; the half message was rolled back", e);
    }
    try {
      try {
        c.setAutoCommit(false);
        work.run(c);
        TxCheck.record(c, id, topic, clock.getAsLong());
        long late = clock.getAsLong() - TxCheck.deadline(stored, unresolvedMs);
        if (late >= 0) {
          throw new RocketRuntimeException("rocketmq: message " + id + ": the business transaction ran " + late
              + " ms past its deadline (half the unresolved window of " + unresolvedMs + " ms after the half message"
              + " was sent; after it the check-back may roll the message back): the database and the message were"
              + " rolled back; send again, or raise unresolvedMs above twice the transaction's time");
        }
        if (crashForTests == Crash.AFTER_DB_ROLLBACK) {
          c.rollback();
          return false;
        }
      } catch (Exception e) {
        rollBack(c, e);
        rollBackHalf(half, id, e);
        throw e instanceof RuntimeException r ? r : new RocketRuntimeException("rocketmq: the business"
            + " transaction of message " + id + " failed: " + e + "; the database and the half message were rolled back", e);
      }
      try {
        c.commit();
      } catch (SQLException e) {
        throw new RocketRuntimeException("rocketmq: the commit of the business transaction of message " + id
            + " failed: " + e.getMessage() + "; the half message is left to the broker's check-back, which commits it"
            + " if the commit landed (its " + TxCheck.TABLE + " row exists) and rolls it back " + unresolvedMs
            + " ms after it was sent if not: look the row up before you send again", e);
      }
      return true;
    } finally {
      close(c, id);
    }
  }

  /** Deletes rows past {@link TxCheck#RETENTION_MS}, at most once an hour; a failure is logged. */
  private void pruneIfDue() {
    long now = clock.getAsLong();
    long last = lastPruneMs.get();
    if (last != Long.MIN_VALUE && now - last < PRUNE_INTERVAL_MS || !lastPruneMs.compareAndSet(last, now)) {
      return;
    }
    try (Connection c = db.open()) {
      c.setAutoCommit(true);
      TxCheck.prune(c, now);
    } catch (SQLException | RuntimeException e) {
      LOG.log(Level.WARNING, "msgcontract: rocketmq: prune " + TxCheck.TABLE + " failed (" + e
          + "); trying again in an hour");
    }
  }

  /** Rolls c back; a failure is added to cause (closing the connection discards the transaction anyway). */
  private static void rollBack(Connection c, Exception cause) {
    try {
      c.rollback();
    } catch (SQLException e) {
      cause.addSuppressed(e);
    }
  }

  /** Rolls the half message back; a failure is logged: without a row, the check-back rolls it back after the window. */
  private void rollBackHalf(Transaction half, String id, Exception cause) {
    try {
      half.rollback();
    } catch (ClientException | RuntimeException e) {
      cause.addSuppressed(e);
      LOG.log(Level.WARNING, "msgcontract: rocketmq: rollback of half message " + id + " failed (" + e
          + "); the broker's check-back rolls it back " + unresolvedMs + " ms after it was sent");
    }
  }

  private static void close(Connection c, String id) {
    try {
      c.close();
    } catch (SQLException e) {
      LOG.log(Level.WARNING, "msgcontract: rocketmq: closing the business database's connection of message " + id
          + " failed: " + e);
    }
  }

  /** The check-back: the envelope's message id looked up in msg_tx_check (no envelope: ROLLBACK). */
  private TransactionResolution check(MessageView mv) {
    String id = messageId(mv.getBody());
    TxCheck.Answer a;
    if (id.isEmpty()) {
      a = TxCheck.Answer.ROLLBACK; // not an envelope: nothing will ever record it (TxCheck.check's rule, no database)
    } else {
      try (Connection c = db.open()) {
        a = TxCheck.check(c, id, mv.getBornTimestamp(), clock.getAsLong(), unresolvedMs);
      } catch (SQLException | RuntimeException e) {
        LOG.log(Level.WARNING, "msgcontract: rocketmq: check-back of half message " + id + " of " + mv.getTopic()
            + ": the business database failed (" + e + "); answering UNKNOWN (the broker asks again)");
        a = TxCheck.Answer.UNKNOWN;
      }
    }
    checkedForTests.accept(id, a);
    return switch (a) {
      case COMMIT -> TransactionResolution.COMMIT;
      case ROLLBACK -> TransactionResolution.ROLLBACK;
      case UNKNOWN -> TransactionResolution.UNKNOWN;
    };
  }

  /** The message id of an envelope's bytes; "" when they are not an envelope. */
  private static String messageId(ByteBuffer body) {
    byte[] b = new byte[body.remaining()];
    body.duplicate().get(b);
    try {
      return Envelopes.decode(b).getMessageId();
    } catch (DecodeException e) {
      return "";
    }
  }

  /** Closes the client: unresolved half messages are left to the check-backs of another producer of their topics. */
  @Override
  public void close() {
    try {
      producer.close();
    } catch (IOException e) {
      // the client's threads stop all the same; every send was awaited
    }
  }
}
