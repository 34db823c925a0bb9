package io.msgcontract.support;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.msgcontract.v1.Envelope;
import io.msgcontract.v1.LastError;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The envelope codec and the consumer skeleton against SQLite, with LastError standing in for
 * an event message (the runtime ships no contract of its own).
 */
class ConsumerTest {
  // Also the event of RoutesTest.
  static final EventSpec<LastError> SPEC = new EventSpec<>(
      "msgcontract.v1.LastError", "errors", "ERROR_SEEN", "range:{range}",
      new RetryPolicy(1000, 2.0, 0, 60000, 1),
      new ErrorRules(List.of(new ErrorRange(50000, 59999, true, "system")), false),
      "", LastError.getDefaultInstance(),
      m -> new BizKeyBuilder().literal("range:").string("range", m.getRange()).key());

  private Connection conn;
  private final AtomicInteger effects = new AtomicInteger();

  @BeforeEach
  void open() throws SQLException {
    conn = DriverManager.getConnection("jdbc:sqlite::memory:");
    DedupStore.migrate(conn);
    conn.setAutoCommit(false);
  }

  @AfterEach
  void close() throws SQLException {
    conn.close();
  }

  private byte[] body(String range) throws BizKeyException {
    LastError m = LastError.newBuilder().setRange(range).build();
    return Envelopes.encode(Envelopes.newEnvelope(SPEC, m, 1));
  }

  @Test
  void envelopeRoundTripsInBinaryAndJson() throws Exception {
    Envelope env = Envelopes.newJsonEnvelope(SPEC, LastError.newBuilder().setRange("r").build(), 7);
    assertEquals("range:r", env.getBizKey());
    assertEquals(env, Envelopes.decode(Envelopes.encode(env)));
    assertEquals(env, Envelopes.decodeJson(Envelopes.encodeJson(env)));
    assertEquals("r", Envelopes.payload(SPEC, env).getRange());
    assertThrows(DecodeException.class, () -> Envelopes.decode(Envelope.getDefaultInstance().toByteArray()));
  }

  @Test
  void duplicateDeliveryRunsTheHandlerOnce() throws Exception {
    Consumer<LastError> c = new Consumer<>(SPEC, "h", (tx, m, e) -> effects.incrementAndGet());
    byte[] body = body("a");
    assertEquals(new Decision.Ack(false), c.process(conn, body));
    assertEquals(new Decision.Ack(true), c.process(conn, body));
    assertEquals(1, effects.get());
    try (Statement s = conn.createStatement();
        ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM msg_dedup")) {
      rs.next();
      assertEquals(1, rs.getInt(1));
    }
  }

  @Test
  void retryableFailureRetriesThenDeadLetters() throws Exception {
    Consumer<LastError> c = new Consumer<>(SPEC, "h", (tx, m, e) -> {
      throw SPEC.rules().error(50301, "ledger down");
    }, () -> 10_000L, () -> 0.0);
    Decision.Retry retry = assertInstanceOf(Decision.Retry.class, c.process(conn, body("b")));
    assertEquals(1000, retry.delayMs());
    assertEquals(1, retry.nextEnvelope().getRetryCount());
    assertEquals(50301, retry.nextEnvelope().getLastError().getCode());
    Envelope due = retry.nextEnvelope().toBuilder().setNotBefore(0).build();
    Decision.DeadLetter dl = assertInstanceOf(Decision.DeadLetter.class, c.process(conn, due.toByteArray()));
    assertEquals("retries_exhausted", dl.reason());
    assertEquals(2, dl.attempts());
  }

  /** Writes the message's range into effects, then fails when the range is "bad". */
  private Consumer<LastError> writingConsumer(List<Observer.Outcome> seen) throws SQLException {
    try (Statement s = conn.createStatement()) {
      s.execute("CREATE TABLE effects (range TEXT NOT NULL)");
    }
    conn.commit();
    return new Consumer<LastError>(SPEC, "h", (tx, m, e) -> {
      try (var ps = tx.prepareStatement("INSERT INTO effects (range) VALUES (?)")) {
        ps.setString(1, m.getRange());
        ps.executeUpdate();
      }
      if (m.getRange().equals("bad")) {
        throw SPEC.rules().error(50301, "ledger down");
      }
    }, () -> 10_000L, () -> 0.0).withObserver(seen::add);
  }

  private List<String> rows(String sql) throws SQLException {
    List<String> out = new ArrayList<>();
    try (Statement s = conn.createStatement(); ResultSet rs = s.executeQuery(sql)) {
      while (rs.next()) {
        out.add(rs.getString(1));
      }
    }
    return out;
  }

  /**
   * Several deliveries in one transaction: the failing one takes back its own
   * claim and writes (its savepoint), the others commit together; a second
   * copy of a claimed key inside the same transaction is a duplicate.
   */
  @Test
  void aSharedTransactionRollsBackOnlyTheFailingDelivery() throws Exception {
    List<Observer.Outcome> seen = new ArrayList<>();
    Consumer<LastError> c = writingConsumer(seen);
    List<Consumer.Pending> pending = new ArrayList<>();
    for (String range : List.of("a", "bad", "c", "a")) {
      pending.add(c.processShared(conn, body(range)));
    }
    assertTrue(seen.isEmpty(), "outcomes are reported after the commit, not before");
    conn.commit();
    for (Consumer.Pending p : pending) {
      p.committed();
    }
    assertEquals(new Decision.Ack(false), pending.get(0).decision());
    assertInstanceOf(Decision.Retry.class, pending.get(1).decision());
    assertEquals(new Decision.Ack(false), pending.get(2).decision());
    assertEquals(new Decision.Ack(true), pending.get(3).decision());
    assertEquals(List.of("a", "c"), rows("SELECT range FROM effects ORDER BY range"));
    assertEquals(List.of("range:a", "range:c"), rows("SELECT biz_key FROM msg_dedup ORDER BY biz_key"));
    assertEquals(4, seen.size());
    // The failed delivery left no claim: its retry is not taken for a duplicate.
    Envelope retry = ((Decision.Retry) pending.get(1).decision()).nextEnvelope().toBuilder().setNotBefore(0).build();
    assertInstanceOf(Decision.DeadLetter.class, c.process(conn, retry.toByteArray()));
  }

  /** A shared transaction that fails is reported by nobody: every delivery is handed back. */
  @Test
  void aLostSharedTransactionReportsNothing() throws Exception {
    List<Observer.Outcome> seen = new ArrayList<>();
    Consumer<LastError> c = writingConsumer(seen);
    Consumer.Pending p = c.processShared(conn, body("a"));
    conn.rollback();
    p.lost(new SQLException("commit failed"));
    p.committed(); // ended already: no effect
    assertTrue(seen.isEmpty());
    assertEquals(List.of(), rows("SELECT range FROM effects"));
    assertEquals(new Decision.Ack(false), c.process(conn, body("a")), "the handed-back delivery runs again");
    assertEquals(1, seen.size());
  }

  /** A consumer whose handler counts its runs and always fails (retryable); seen gets the outcomes. */
  private Consumer<LastError> failing(AtomicInteger runs, List<Observer.Outcome> seen) {
    return new Consumer<LastError>(SPEC, "h", (tx, m, e) -> {
      runs.incrementAndGet();
      throw SPEC.rules().error(50301, "ledger down");
    }, () -> 10_000L, () -> 0.0).withObserver(seen::add);
  }

  private static List<String> labels(List<Observer.Outcome> seen) {
    return seen.stream().map(Observer.Outcome::label).toList();
  }

  /**
   * One retry chain per message (own transactions): a second copy of a place
   * that went on stops (a producer's duplicate after its failure, a retry copy
   * before its handler runs); the copy that went on, delivered again, goes on
   * again. SPEC retries once.
   */
  @Test
  void aSecondCopyOfAnAttemptGoesNoFurther() throws Exception {
    AtomicInteger runs = new AtomicInteger();
    List<Observer.Outcome> seen = new ArrayList<>();
    Consumer<LastError> c = failing(runs, seen);
    byte[] first = body("x");
    Decision.Retry retry = assertInstanceOf(Decision.Retry.class, c.process(conn, first, "T/0/1"));
    assertEquals(new ChainPos(0, 0, "T/0/1"), RetryChain.row(conn, "h", retry.nextEnvelope().getMessageId()));
    assertEquals(new Decision.Ack(true), c.process(conn, first, "T/1/2"), "a producer's duplicate, after it failed");
    assertEquals(2, runs.get(), "a first delivery is not looked up: its handler runs");
    assertInstanceOf(Decision.Retry.class, c.process(conn, first, "T/0/1"), "the copy that went on, redelivered");
    byte[] copy = retry.nextEnvelope().toBuilder().setNotBefore(0).build().toByteArray();
    Decision.DeadLetter dl = assertInstanceOf(Decision.DeadLetter.class, c.process(conn, copy, "R/0/4"));
    assertEquals(2, dl.attempts());
    assertEquals(4, runs.get());
    assertEquals(new Decision.Ack(true), c.process(conn, copy, "R/0/5"), "a second copy of attempt 1");
    assertEquals(4, runs.get(), "a superseded retry copy's handler ran");
    assertEquals(new Decision.Ack(true), c.process(conn, first, "T/0/1"), "the first delivery, after its retry went on");
    assertInstanceOf(Decision.DeadLetter.class, c.process(conn, copy, "R/0/4"), "the copy that went on, redelivered");
    assertEquals(List.of("retry_scheduled", "deduplicated", "retry_scheduled", "dead_lettered", "deduplicated",
        "deduplicated", "dead_lettered"), labels(seen));
    // Without a delivery id nothing is kept: the old behaviour, for transports whose retry cannot fork.
    assertInstanceOf(Decision.DeadLetter.class, c.process(conn, copy));
  }

  /**
   * In a shared transaction the chain advances at Pending.committed, after
   * the caller's commit; the caller looks retry copies up before the
   * transaction (superseded).
   */
  @Test
  void aSharedTransactionAdvancesTheChainAfterItsCommit() throws Exception {
    AtomicInteger runs = new AtomicInteger();
    List<Observer.Outcome> seen = new ArrayList<>();
    Consumer<LastError> c = failing(runs, seen);
    Envelope env = Envelopes.decode(body("y")).toBuilder().setRetryCount(1).build();
    byte[] copy = env.toByteArray();
    List<Consumer.Pending> pending = List.of(c.processShared(conn, copy, "R/0/4"), c.processShared(conn, copy, "R/0/5"));
    conn.commit();
    assertInstanceOf(Decision.DeadLetter.class, pending.get(0).committed());
    assertEquals(new Decision.Ack(true), pending.get(1).committed(), "the second copy of attempt 1");
    assertEquals(new Decision.Ack(true), pending.get(1).decision());
    assertEquals(List.of("dead_lettered", "deduplicated"), labels(seen));
    assertEquals(2, runs.get());
    assertEquals(new Decision.Ack(true), c.superseded(conn, env, "R/0/6"));
    assertEquals(null, c.superseded(conn, env, "R/0/4"), "the copy that went on");
    assertEquals(null, c.superseded(conn, env.toBuilder().setRetryCount(0).build(), "T/0/9"),
        "a first delivery is not looked up");
    assertEquals(null, c.superseded(conn, env.toBuilder().setRetryCount(2).build(), "R/0/7"), "a later attempt");
    assertEquals(List.of("dead_lettered", "deduplicated", "deduplicated"), labels(seen));
  }

  /** A chain that cannot advance hands the delivery back: nothing observed, the retry not decided. */
  @Test
  void aChainThatCannotAdvanceHandsTheDeliveryBack() throws Exception {
    AtomicInteger runs = new AtomicInteger();
    List<Observer.Outcome> seen = new ArrayList<>();
    Consumer<LastError> c = failing(runs, seen);
    try (Statement s = conn.createStatement()) {
      s.execute("DROP TABLE " + RetryChain.TABLE);
    }
    conn.commit();
    SQLException e = assertThrows(SQLException.class, () -> c.process(conn, body("z"), "T/0/1"));
    assertTrue(e.getMessage().contains("advance retry chain"), e.getMessage());
    assertEquals(1, runs.get());
    assertTrue(seen.isEmpty());
    assertEquals(List.of(), rows("SELECT biz_key FROM msg_dedup"), "the failed delivery left no claim");
  }

  @Test
  void undecodableBodyIsDeadLetteredWithoutRunningTheHandler() throws Exception {
    Consumer<LastError> c = new Consumer<>(SPEC, "h", (tx, m, e) -> effects.incrementAndGet());
    Decision.DeadLetter dl = assertInstanceOf(Decision.DeadLetter.class,
        c.process(conn, new byte[] {(byte) 0xff, 1, 2}));
    assertEquals("decode", dl.reason());
    assertEquals(Consumer.CODE_DECODE, dl.code());
    assertEquals(0, effects.get());
  }
}
