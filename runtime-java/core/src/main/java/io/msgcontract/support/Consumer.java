package io.msgcontract.support;

import com.google.protobuf.Message;
import io.msgcontract.v1.Envelope;
import io.msgcontract.v1.LastError;
import java.lang.System.Logger.Level;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.function.DoubleSupplier;
import java.util.function.LongSupplier;

/**
 * The transport-neutral consume protocol of the Go runtime, per delivery:
 * decode (a failure is dead-lettered, never retried); defer when not_before
 * is in the future; claim (biz_key, handler) in the caller's JDBC
 * transaction (a duplicate is acknowledged without running the handler);
 * run the handler in that transaction and commit; on failure roll back (the
 * claim with it, or the retry would be dropped as a duplicate), classify, and
 * retry with backoff or dead-letter. {@link #process} gives a delivery a
 * transaction of its own; {@link #processShared} a savepoint in one that
 * several deliveries share.
 *
 * <p>On a transport whose retry can fork (the retry copy is published, then
 * the delivery settled in a second step: Kafka), the caller passes each
 * delivery's id, and the consumer keeps each message to one retry chain
 * ({@link RetryChain}, docs/DESIGN.md "One retry chain per message"): a retry
 * copy or a replay is looked up before its handler runs, and a failed copy
 * advances the chain before its retry or dead letter is decided for good. A
 * copy that another copy of the same or a later place already advanced past
 * is superseded: its decision is {@code Ack(deduplicated)}, without a retry, a
 * dead letter or a retry count, and it is logged at INFO.
 *
 * @param <M> the event message
 */
public final class Consumer<M extends Message> {
  /** The code of a message that did not decode, as in the Go runtime; it is never retried. */
  public static final int CODE_DECODE = -3;

  /** The largest last_error message kept, in bytes, as in the Go runtime. */
  public static final int MAX_ERROR_MESSAGE = 512;

  private static final System.Logger LOG = System.getLogger(Consumer.class.getName());

  private final EventSpec<M> spec;
  private final String handlerName;
  private final Handler<M> handler;
  private final LongSupplier clockMs;
  private final DoubleSupplier random;
  private final Observer observer;
  private final DeliveryTracer tracer;

  /**
   * Returns a consumer of spec's event running handler under handlerName, the
   * dedup key's second half. clockMs returns UTC epoch milliseconds (default
   * System::currentTimeMillis); random returns jitter samples in [0,1)
   * (default Math::random).
   */
  public Consumer(EventSpec<M> spec, String handlerName, Handler<M> handler, LongSupplier clockMs,
      DoubleSupplier random) {
    this(spec, handlerName, handler, clockMs, random, Observer.NONE, null);
  }

  private Consumer(EventSpec<M> spec, String handlerName, Handler<M> handler, LongSupplier clockMs,
      DoubleSupplier random, Observer observer, DeliveryTracer tracer) {
    this.spec = spec;
    this.handlerName = handlerName;
    this.handler = handler;
    this.clockMs = clockMs;
    this.random = random;
    this.observer = observer;
    this.tracer = tracer;
  }

  /**
   * Returns this consumer with observer told every outcome (metrics, logs; see
   * {@code io.msgcontract.observe}).
   *
   * @param observer the observer
   * @return a consumer like this one that reports to observer
   */
  public Consumer<M> withObserver(Observer observer) {
    return new Consumer<>(spec, handlerName, handler, clockMs, random, observer, tracer);
  }

  /**
   * Returns this consumer with a span per delivery (see {@code io.msgcontract.observe.Tracing}):
   * started once the envelope decodes, current while the handler runs, ended at the outcome.
   *
   * @param tracer the tracer, or null for none
   * @return a consumer like this one that traces with tracer
   */
  public Consumer<M> withTracer(DeliveryTracer tracer) {
    return new Consumer<>(spec, handlerName, handler, clockMs, random, observer, tracer);
  }

  /** Like the full constructor with the system clock and Math.random. */
  public Consumer(EventSpec<M> spec, String handlerName, Handler<M> handler) {
    this(spec, handlerName, handler, System::currentTimeMillis, Math::random);
  }

  /**
   * Processes one delivered body in conn, which must not be in auto-commit
   * mode; the consumer commits or rolls back. A SQLException means the
   * database failed: the message is not at fault, and the caller hands the
   * delivery back without counting a retry.
   */
  public Decision process(Connection conn, byte[] body) throws SQLException {
    return process(conn, body, null);
  }

  /**
   * Like {@link #process(Connection, byte[])} for a delivery of a transport
   * whose retry can fork, keeping the message to one retry chain (see the
   * class comment): a retry copy or a replay is looked up before the claim,
   * and a failure advances the chain after the rollback, each statement on
   * its own on conn. A superseded copy is {@code Ack(deduplicated)}; a
   * SQLException (the database failed, the chain's statements included)
   * means the delivery is handed back.
   *
   * @param conn a connection not in auto-commit mode, with no transaction of the caller's open
   * @param body the delivered bytes
   * @param deliveryId the transport's id of the stored copy, the same on each of its
   *     redeliveries (Kafka: {@code <topic as the broker names it>/<partition>/<offset>});
   *     null keeps no chain
   * @return the decision
   * @throws SQLException when the database failed
   */
  public Decision process(Connection conn, byte[] body, String deliveryId) throws SQLException {
    return run(conn, body, new OwnTransaction(conn), deliveryId).committed();
  }

  /**
   * Processes one delivered body inside conn's open transaction, which other
   * deliveries share and the caller commits (as runtime-go's consumer shares
   * one transaction among a fetch's messages): the claim and the handler run
   * inside a savepoint, released when the handler succeeds and rolled back
   * when it fails or the claim is a duplicate, so a failing delivery takes
   * back its own claim and writes and nobody else's. Handlers must then not
   * commit or roll back the connection themselves.
   *
   * <p>The decision holds once the caller's commit succeeds: call {@link
   * Pending#committed()} then, or {@link Pending#lost(Exception)} when the
   * commit or another delivery's database work failed and every delivery of
   * the transaction is handed back. A SQLException from this method means the
   * same for the whole transaction; this delivery's span is already ended.
   *
   * @param conn a connection in a transaction (not in auto-commit mode)
   * @param body the delivered bytes
   * @return the decision, held until the caller's commit
   * @throws SQLException when the database failed
   */
  public Pending processShared(Connection conn, byte[] body) throws SQLException {
    return processShared(conn, body, null);
  }

  /**
   * Like {@link #processShared(Connection, byte[])} for a delivery of a
   * transport whose retry can fork (see the class comment). The look-up of a
   * retry copy is not made here, inside the shared transaction: call {@link
   * #superseded} before the transaction begins. When the handler fails,
   * {@link Pending#committed()} advances the chain on conn, after the
   * caller's commit, and may turn the decision into {@code Ack(deduplicated)}.
   *
   * @param conn a connection in a transaction (not in auto-commit mode)
   * @param body the delivered bytes
   * @param deliveryId the transport's id of the stored copy (see {@link #process(Connection,
   *     byte[], String)}); null keeps no chain
   * @return the decision, held until the caller's commit
   * @throws SQLException when the database failed
   */
  public Pending processShared(Connection conn, byte[] body, String deliveryId) throws SQLException {
    return run(conn, body, new SharedTransaction(conn), deliveryId);
  }

  /**
   * Looks a retry copy or a replay (retry_count or replay_count above 0) up
   * in its message's retry chain before its handler runs, in a statement of
   * its own on conn, which must not be in a transaction: the caller of {@link
   * #processShared(Connection, byte[], String)} calls it before the shared
   * transaction begins ({@link #process(Connection, byte[], String)} does it
   * itself). A first delivery is not looked up. A failed look-up is logged
   * and lets the copy run: the chain's advance decides again.
   *
   * @param conn a connection outside any transaction
   * @param env the delivered envelope, due, whose event this consumer handles
   * @param deliveryId the transport's id of the stored copy
   * @return {@code Ack(deduplicated)} when another copy of the message went on (reported to the
   *     observer and the tracer, and logged): acknowledge the delivery without processing it;
   *     null when it goes on
   */
  public Decision superseded(Connection conn, Envelope env, String deliveryId) {
    Run run = new Run();
    run.env = env;
    ChainPos went = lookUp(conn, env, deliveryId);
    if (went == null) {
      return null;
    }
    if (tracer != null) {
      run.span = tracer.start(spec.topic(), handlerName, env, deliveryId);
    }
    Decision d = new Decision.Ack(true);
    report(run, d);
    logSuperseded(env, deliveryId, went);
    return d;
  }

  /** The chain row that supersedes env's copy, or null when it goes on or was not looked up. */
  private ChainPos lookUp(Connection conn, Envelope env, String deliveryId) {
    if (deliveryId == null || (env.getRetryCount() == 0 && env.getReplayCount() == 0)) {
      return null;
    }
    ChainPos went;
    try {
      went = RetryChain.row(conn, handlerName, env.getMessageId());
    } catch (SQLException e) {
      LOG.log(Level.WARNING, () -> "msgcontract: retry chain look-up failed; running the handler"
          + fields(env, deliveryId) + " error=" + e);
      return null;
    }
    return went != null && RetryChain.superseded(went, pos(env, deliveryId)) ? went : null;
  }

  private static ChainPos pos(Envelope env, String deliveryId) {
    return new ChainPos(env.getReplayCount(), env.getRetryCount(), deliveryId);
  }

  /** Logs that env's copy was acknowledged as superseded by went, as the Go runtime does. */
  private void logSuperseded(Envelope env, String deliveryId, ChainPos went) {
    LOG.log(Level.INFO, () -> "msgcontract: superseded copy acknowledged: another copy of this message went on"
        + fields(env, deliveryId) + " outcome=deduplicated chain_replay_count=" + went.replayCount()
        + " chain_attempt=" + went.attempt() + " chain_delivery_id=" + went.deliveryId());
  }

  /** The message's log fields, as the Go runtime names them. */
  private String fields(Envelope env, String deliveryId) {
    return " transport_id=" + deliveryId + " topic=" + spec.topic() + " message_id=" + env.getMessageId()
        + " biz_key=" + env.getBizKey() + " retry_count=" + env.getRetryCount() + " event_type="
        + env.getEventType() + " handler=" + handlerName;
  }

  /** One delivery of a broker loop's batch: the consumer its route names, its body and its delivery id. */
  public record BatchItem(Consumer<?> consumer, byte[] body, String deliveryId) {}

  /**
   * Runs the claims and handlers of a broker loop's batch in one transaction on c, each in a
   * savepoint ({@link #processShared}), and commits it; a failure rolls it back, tells each
   * {@link Pending} its transaction was lost, and is rethrown (the loop hands the whole batch back).
   * The Kafka and RabbitMQ loops share it.
   */
  public static List<Pending> processBatch(Connection c, List<BatchItem> items) throws SQLException {
    c.setAutoCommit(false);
    List<Pending> pending = new ArrayList<>(items.size());
    try {
      for (BatchItem it : items) {
        pending.add(it.consumer().processShared(c, it.body(), it.deliveryId()));
      }
      c.commit();
    } catch (SQLException | RuntimeException x) {
      for (Pending p : pending) {
        p.lost(x);
      }
      // A failed commit can leave the transaction open; what close does
      // with it is the driver's choice, so it is rolled back here.
      try {
        c.rollback();
      } catch (SQLException r) {
        x.addSuppressed(r);
      }
      throw x;
    }
    return pending;
  }

  /**
   * A decision taken inside a transaction the caller commits ({@link
   * #processShared}). Its outcome is reported (observer, span) once the
   * caller says how the transaction ended.
   */
  public static final class Pending {
    private final Consumer<?> owner;
    private final Run run;
    private final Connection conn;
    private Decision decision;
    private boolean ended;

    private Pending(Consumer<?> owner, Run run, Connection conn, Decision decision) {
      this.owner = owner;
      this.run = run;
      this.conn = conn;
      this.decision = decision;
    }

    /** Returns the decision; after {@link #committed()}, the final one. */
    public Decision decision() {
      return decision;
    }

    /**
     * Reports the decision: the transaction it was taken in committed. When
     * the handler failed and the delivery has an id, the message's retry
     * chain is advanced first, on the connection the delivery ran on, which
     * must still be open and outside any transaction; a copy superseded by
     * another becomes {@code Ack(deduplicated)}. Calling it again returns the
     * decision and does nothing else.
     *
     * @return the final decision
     * @throws SQLException when the chain could not be advanced: the delivery is handed back
     *     (nothing is observed; the span ends with the failure)
     */
    public Decision committed() throws SQLException {
      if (ended) {
        return decision;
      }
      ended = true;
      ChainStep step = run.chain;
      if (step != null) {
        RetryChain.Advance a;
        try {
          a = RetryChain.advance(conn, owner.handlerName, run.env.getMessageId(), step.pos(), step.atMs());
        } catch (SQLException | RuntimeException e) {
          if (run.span != null) {
            run.span.end(null, e);
          }
          throw e;
        }
        if (!a.ok()) {
          decision = new Decision.Ack(true);
          run.failure = null; // the failure goes no further: the copy that went on carries it
          owner.report(run, decision);
          owner.logSuperseded(run.env, step.pos().deliveryId(), a.went());
          return decision;
        }
      }
      owner.report(run, decision);
      return decision;
    }

    /**
     * Drops the decision: the transaction failed (cause) and the delivery
     * is handed back. Nothing is observed; the span ends with cause.
     *
     * @param cause the database failure
     */
    public void lost(Exception cause) {
      if (!ended) {
        ended = true;
        if (run.span != null) {
          run.span.end(null, cause);
        }
      }
    }
  }

  /**
   * Ends run's span with d and tells the observer, as a committed delivery's outcome; a handled
   * one's end-to-end latency runs to the clock read here, after the commit.
   */
  private void report(Run run, Decision d) {
    if (run.span != null) {
      run.span.end(d, run.failure);
    }
    if (!(d instanceof Decision.Defer) && observer != Observer.NONE) {
      // An envelope that did not decode belongs to no handler, as in Go.
      double endToEnd = run.env != null && d instanceof Decision.Ack a && !a.deduplicated()
          ? Observer.Outcome.endToEndSeconds(run.env, clockMs.getAsLong()) : Double.NaN;
      observer.observe(run.env == null
          ? new Observer.Outcome("", spec.topic(), "", null, d, run.handlerSeconds)
          : new Observer.Outcome(handlerName, spec.topic(), run.env.getEventType(), run.env, d, run.handlerSeconds,
              endToEnd));
    }
  }

  /** What process learned on the way to its decision, for the observer. */
  private static final class Run {
    Envelope env;
    double handlerSeconds = Double.NaN;
    DeliveryTracer.Traced span;
    Exception failure;
    /** Set when the handler failed and the delivery has an id: the chain advances before the decision holds. */
    ChainStep chain;
  }

  /** A failed copy about to go on to a retry or a dead letter: its place, and when it failed. */
  private record ChainStep(ChainPos pos, long atMs) {}

  /**
   * Where one delivery's claim and handler begin and end: a transaction of
   * its own, or a savepoint (SharedTransaction) of a transaction shared with
   * other deliveries.
   */
  private interface TxScope {
    /** Called before the claim. */
    void begin() throws SQLException;

    /** Keeps the claim and the handler's writes. */
    void keep() throws SQLException;

    /** Takes the claim and the handler's writes back. */
    void undo() throws SQLException;
  }

  private record OwnTransaction(Connection conn) implements TxScope {
    @Override
    public void begin() {}

    @Override
    public void keep() throws SQLException {
      conn.commit();
    }

    @Override
    public void undo() throws SQLException {
      conn.rollback();
    }
  }

  private static final class SharedTransaction implements TxScope {
    private final Connection conn;
    private java.sql.Savepoint sp;

    SharedTransaction(Connection conn) {
      this.conn = conn;
    }

    @Override
    public void begin() throws SQLException {
      sp = conn.setSavepoint();
    }

    @Override
    public void keep() throws SQLException {
      conn.releaseSavepoint(sp);
    }

    @Override
    public void undo() throws SQLException {
      conn.rollback(sp);
    }
  }

  private Pending run(Connection conn, byte[] body, TxScope scope, String deliveryId) throws SQLException {
    Run run = new Run();
    try {
      return new Pending(this, run, conn, decide(conn, body, run, scope, deliveryId));
    } catch (SQLException | RuntimeException e) {
      if (run.span != null) {
        run.span.end(null, e);
      }
      throw e;
    }
  }

  private Decision decide(Connection conn, byte[] body, Run run, TxScope tx, String deliveryId)
      throws SQLException {
    Envelope env;
    M message;
    try {
      env = Envelopes.decode(body);
      run.env = env;
      if (tracer != null) {
        run.span = tracer.start(spec.topic(), handlerName, env, deliveryId);
      }
      message = Envelopes.payload(spec, env);
    } catch (DecodeException e) {
      return new Decision.DeadLetter("decode", CODE_DECODE, truncate(e.getMessage()), 0);
    }
    long now = clockMs.getAsLong();
    if (env.getNotBefore() > now) {
      return new Decision.Defer(env.getNotBefore());
    }
    if (tx instanceof OwnTransaction) { // a shared transaction's caller looked it up (superseded)
      ChainPos went = lookUp(conn, env, deliveryId);
      if (went != null) {
        logSuperseded(env, deliveryId, went);
        return new Decision.Ack(true); // reported by committed()
      }
    }
    boolean claimed;
    tx.begin();
    try {
      claimed = DedupStore.claim(conn, env.getBizKey(), handlerName, env.getMessageId(),
          PayloadHash.of(message), now);
    } catch (SQLException e) {
      try {
        tx.undo();
      } catch (SQLException u) {
        e.addSuppressed(u);
      }
      throw e;
    }
    if (!claimed) {
      tx.undo();
      return new Decision.Ack(true);
    }
    Exception failure = null;
    long start = System.nanoTime();
    DeliveryTracer.Scope scope = run.span == null ? null : run.span.activate();
    try {
      handler.handle(conn, message, env);
    } catch (Exception e) { // handlers may fail in any way; every failure is classified
      failure = e;
    } finally {
      if (scope != null) {
        scope.close();
      }
    }
    run.handlerSeconds = (System.nanoTime() - start) / 1e9;
    if (failure == null) {
      // A failed commit is the database's failure, not the message's: it
      // propagates and the delivery is handed back uncounted.
      tx.keep();
      return new Decision.Ack(false);
    }
    tx.undo();
    run.failure = failure;
    if (deliveryId != null) {
      run.chain = new ChainStep(pos(env, deliveryId), now);
    }
    return fail(env, failure, now);
  }

  private Decision fail(Envelope env, Exception failure, long now) {
    Classification c = spec.rules().classify(failure);
    int code = failure instanceof ContractException ce ? ce.code() : 0;
    String msg = truncate(String.valueOf(failure.getMessage()));
    int next = env.getRetryCount() + 1;
    if (c.retryable() && !spec.retry().deadLetter(next)) {
      long delay = spec.retry().delayMs(next, random.getAsDouble());
      Envelope.Builder b = env.toBuilder()
          .setRetryCount(next)
          .setNotBefore(now + delay)
          .setLastError(LastError.newBuilder()
              .setCode(code).setMessage(msg).setRetryable(c.retryable()).setRange(c.range()).setFailedAt(now));
      if (env.getFirstFailedAt() == 0) {
        b.setFirstFailedAt(now);
      }
      return new Decision.Retry(b.build(), delay);
    }
    String reason = c.retryable() ? "retries_exhausted" : "non_retryable";
    return new Decision.DeadLetter(reason, code, msg, next);
  }

  /** Cuts s to at most MAX_ERROR_MESSAGE UTF-8 bytes at a character boundary. */
  static String truncate(String s) {
    byte[] b = s.getBytes(StandardCharsets.UTF_8);
    if (b.length <= MAX_ERROR_MESSAGE) {
      return s;
    }
    int n = MAX_ERROR_MESSAGE;
    while (n > 0 && (b[n] & 0xC0) == 0x80) {
      n--;
    }
    return new String(b, 0, n, StandardCharsets.UTF_8);
  }
}
