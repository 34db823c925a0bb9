package io.msgcontract.rocketmq;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.msgcontract.kafka.testpb.OrderNote;
import io.msgcontract.support.Ddl;
import io.msgcontract.support.EventSpec;
import io.msgcontract.support.TxCheck;
import io.msgcontract.v1.Envelope;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * RocketTxProducer on the real broker, which checks an unresolved half
 * message back after 2 s and every 2 s (scripts/rocketmq-start.sh): the
 * message reaches consumers exactly when the business transaction commits,
 * the verdict coming from the producer or, when it is lost, from the
 * check-back's msg_tx_check row.
 */
class TxProducerTest extends BrokerTest {
  /** A TRANSACTION topic: the proxy refuses a half message to a NORMAL one. */
  static final String TX_TOPIC = "payments";
  static final EventSpec<OrderNote> TX_SPEC = Fixture.spec(TX_TOPIC, Fixture.POLICY);
  /** Past the broker's first check-backs of a half message (2 s, then every 2 s), with a margin. */
  static final long CHECK_BACKS_MS = 5_000;

  private final List<Envelope> delivered = Collections.synchronizedList(new ArrayList<>());
  private final List<String> answers = Collections.synchronizedList(new ArrayList<>());
  private RocketConsumerLoop loop;

  @BeforeEach
  void txTopicConsumerAndDatabase() throws Exception {
    Fixture.run(fx.peer("topics", "-tx-topic", TX_TOPIC));
    try (Connection c = producerDb(); Statement st = c.createStatement()) {
      TxCheck.migrate(c, Ddl.SQLITE);
      st.execute("CREATE TABLE payments (order_id TEXT NOT NULL)");
    }
    loop = loop(fx.config(), TX_SPEC, (tx, m, env) -> delivered.add(env));
  }

  /** The producer's business database, apart from the consumer's. */
  Connection producerDb() throws SQLException {
    return Fixture.open(fx.dir.resolve("producer.db"));
  }

  RocketTxProducer producer(long unresolvedMs, LongSupplier clock) {
    RocketTxProducer p = new RocketTxProducer(fx.config(), this::producerDb, unresolvedMs, clock, TX_TOPIC);
    p.checkedForTests = (id, a) -> answers.add(id + " " + a);
    toClose.add(p);
    return p;
  }

  RocketTxProducer producer() {
    return producer(TxCheck.DEFAULT_UNRESOLVED_MS, System::currentTimeMillis);
  }

  /** The business effect: a payments row. */
  static RocketTxProducer.Work pay(String orderId) {
    return tx -> {
      try (PreparedStatement st = tx.prepareStatement("INSERT INTO payments (order_id) VALUES (?)")) {
        st.setString(1, orderId);
        st.executeUpdate();
      }
    };
  }

  List<String> column(String sql) throws SQLException {
    List<String> out = new ArrayList<>();
    try (Connection c = producerDb(); Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
      while (rs.next()) {
        out.add(rs.getString(1));
      }
    }
    return out;
  }

  List<String> payments() throws SQLException {
    return column("SELECT order_id FROM payments");
  }

  List<String> txRows() throws SQLException {
    return column("SELECT message_id FROM " + TxCheck.TABLE);
  }

  /** Nothing reached the consumer and the producer's database kept nothing. */
  void assertNothingCommitted() throws SQLException {
    assertEquals(List.of(), delivered, "delivered");
    assertEquals(0, loop.handled() + loop.deduplicated(), "deliveries");
    assertEquals(List.of(), payments(), "payments");
    assertEquals(List.of(), txRows(), TxCheck.TABLE);
  }

  @Test
  void aCommittedSendReachesTheConsumerOnce() throws Exception {
    RocketTxProducer p = producer();
    Envelope env = Fixture.envelope(TX_SPEC, "order-1");
    p.send(TX_TOPIC, env, pay("order-1"));
    Fixture.waitFor("the message delivered", () -> loop.handled() == 1);
    Thread.sleep(CHECK_BACKS_MS); // a second copy would come by now
    assertEquals(List.of(env), delivered);
    assertEquals(0, loop.deduplicated(), "duplicates delivered");
    assertEquals(List.of(env.getMessageId()), txRows());
    assertEquals(List.of("order-1"), payments());
    assertEquals(List.of(), answers, "check-backs of a committed message");

    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> p.send(TX_TOPIC, env.toBuilder().clearMessageId().build(), pay("order-2")));
    assertTrue(e.getMessage().contains("the envelope has no message id"), e.getMessage());
    e = assertThrows(IllegalArgumentException.class, () -> p.send("elsewhere", env, pay("order-3")));
    assertTrue(e.getMessage().contains("topic elsewhere is not one of the producer's topics"), e.getMessage());
    assertEquals(List.of("order-1"), payments(), "work of a refused send ran");
  }

  @Test
  void failingWorkRollsBothBack() throws Exception {
    RocketTxProducer p = producer();
    IllegalStateException declined = new IllegalStateException("card declined");
    IllegalStateException got = assertThrows(IllegalStateException.class,
        () -> p.send(TX_TOPIC, Fixture.envelope(TX_SPEC, "order-1"), tx -> {
          pay("order-1").run(tx);
          throw declined;
        }));
    assertSame(declined, got);
    Exception checked = new Exception("ledger closed");
    RocketRuntimeException wrapped = assertThrows(RocketRuntimeException.class,
        () -> p.send(TX_TOPIC, Fixture.envelope(TX_SPEC, "order-2"), tx -> {
          throw checked;
        }));
    assertSame(checked, wrapped.getCause());
    assertTrue(wrapped.getMessage().contains("rolled back"), wrapped.getMessage());
    Thread.sleep(CHECK_BACKS_MS);
    assertNothingCommitted();
    assertEquals(List.of(), answers, "check-backs of rolled-back messages");
  }

  @Test
  void aVerdictLostAfterTheCommitIsCommittedByTheCheckBack() throws Exception {
    RocketTxProducer first = producer();
    first.crashForTests = RocketTxProducer.Crash.AFTER_DB_COMMIT;
    Envelope env = Fixture.envelope(TX_SPEC, "order-1");
    first.send(TX_TOPIC, env, pay("order-1"));
    first.close(); // dies at once: the proxy asks the next producer of the topic
    List<String> second = Collections.synchronizedList(new ArrayList<>());
    producer().checkedForTests = (id, a) -> second.add(id + " " + a); // the restarted service
    Fixture.waitFor("the message delivered", () -> loop.handled() == 1);
    assertEquals(List.of(env.getMessageId() + " COMMIT"), second, "the second producer's answers");
    assertEquals(List.of(), answers, "the first producer's answers");
    Thread.sleep(CHECK_BACKS_MS);
    assertEquals(List.of(env), delivered);
    assertEquals(0, loop.deduplicated(), "duplicates delivered");
    assertEquals(List.of("order-1"), payments());
  }

  @Test
  void aCrashBeforeTheCommitIsRolledBackOnceTheWindowPasses() throws Exception {
    // The first check-back comes 2 to 4 s after the send: a window of 6 s
    // answers it UNKNOWN, and a later one ROLLBACK.
    RocketTxProducer p = producer(6_000, System::currentTimeMillis);
    p.crashForTests = RocketTxProducer.Crash.AFTER_DB_ROLLBACK;
    Envelope env = Fixture.envelope(TX_SPEC, "order-1");
    p.send(TX_TOPIC, env, pay("order-1"));
    String id = env.getMessageId();
    Fixture.waitFor("a ROLLBACK answer", () -> answers.contains(id + " ROLLBACK"));
    List<String> seen = List.copyOf(answers);
    assertTrue(seen.size() >= 2 && seen.subList(0, seen.size() - 1).stream().allMatch((id + " UNKNOWN")::equals)
        && seen.get(seen.size() - 1).equals(id + " ROLLBACK"), "answers: UNKNOWN, then ROLLBACK: " + seen);
    Thread.sleep(CHECK_BACKS_MS);
    assertNothingCommitted();
    assertEquals(seen, answers, "check-backs after the ROLLBACK");
  }

  @Test
  void aSendPastTheDeadlineRollsBackAndThrows() throws Exception {
    AtomicLong skew = new AtomicLong();
    RocketTxProducer p = producer(TxCheck.DEFAULT_UNRESOLVED_MS, () -> System.currentTimeMillis() + skew.get());
    RocketRuntimeException e = assertThrows(RocketRuntimeException.class,
        () -> p.send(TX_TOPIC, Fixture.envelope(TX_SPEC, "order-1"), tx -> {
          pay("order-1").run(tx);
          skew.set(TxCheck.DEFAULT_UNRESOLVED_MS / 2); // the work took half the window
        }));
    assertTrue(e.getMessage().contains("past its deadline"), e.getMessage());
    Thread.sleep(CHECK_BACKS_MS);
    assertNothingCommitted();
    assertEquals(List.of(), answers, "check-backs of a rolled-back message");
  }
}
