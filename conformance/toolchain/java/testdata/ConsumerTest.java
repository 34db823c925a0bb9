package com.example.shop.payment.v1;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.msgcontract.support.BizKeyException;
import io.msgcontract.support.Consumer;
import io.msgcontract.support.Decision;
import io.msgcontract.support.DecodeException;
import io.msgcontract.support.DedupStore;
import io.msgcontract.support.Envelopes;
import io.msgcontract.support.NonRetryableException;
import io.msgcontract.support.RetryableException;
import io.msgcontract.support.Transit;
import io.msgcontract.v1.Envelope;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Behaviour of the generated payment contract and the consumer skeleton on SQLite. */
class ConsumerTest {
  private static final long NOW = 1_700_000_000_000L;

  private Connection conn;

  @BeforeEach
  void open() throws SQLException {
    conn = DriverManager.getConnection("jdbc:sqlite::memory:");
    DedupStore.migrate(conn);
    try (Statement st = conn.createStatement()) {
      st.execute("CREATE TABLE payments (order_id TEXT PRIMARY KEY, amount BIGINT)");
    }
    conn.setAutoCommit(false);
  }

  @AfterEach
  void close() throws SQLException {
    conn.close();
  }

  private static PaySuccess pay(String orderId) {
    return PaySuccess.newBuilder().setOrderId(orderId).setAmount(100).build();
  }

  private Consumer<PaySuccess> consumer(io.msgcontract.support.Handler<PaySuccess> h) {
    return new Consumer<>(PaymentContract.PaySuccess.SPEC, "payments", h, () -> NOW, () -> 0.5);
  }

  private static void insert(Connection tx, PaySuccess m) throws SQLException {
    try (PreparedStatement st = tx.prepareStatement("INSERT INTO payments VALUES (?, ?)")) {
      st.setString(1, m.getOrderId());
      st.setLong(2, m.getAmount());
      st.executeUpdate();
    }
  }

  private long count(String table) throws SQLException {
    try (Statement st = conn.createStatement(); ResultSet rs = st.executeQuery("SELECT COUNT(*) FROM " + table)) {
      rs.next();
      return rs.getLong(1);
    }
  }

  @Test
  void bizKeyEscapesAndRejectsEmpty() throws Exception {
    assertEquals("order_id:a%20b%3A%E4%B8%AD:PAY_SUCCESS", PaymentContract.PaySuccess.bizKey(pay("a b:中")));
    BizKeyException e = assertThrows(BizKeyException.class, () -> PaymentContract.PaySuccess.bizKey(pay("")));
    assertEquals(BizKeyException.Code.EMPTY_FIELD, e.code());
    assertEquals("order_id", e.field());
  }

  @Test
  void contractConstantsAndErrors() {
    assertEquals("order-event", PaymentContract.PaySuccess.TOPIC);
    assertEquals("PAY_SUCCESS", PaymentContract.PaySuccess.EVENT_TYPE);
    assertEquals(6, PaymentContract.PaySuccess.RETRY.maxRetries());
    assertInstanceOf(RetryableException.class, PaymentContract.error(50301, "db down"));
    assertInstanceOf(NonRetryableException.class, PaymentContract.error(40001, "bad order"));
    assertEquals("business", PaymentContract.classify(40001).range());
    assertTrue(PaymentContract.classifyNoCode().retryable());
    assertEquals(Transit.ALLOWED, PaymentContract.OrderState.canTransit(OrderState.PAYING, OrderState.PAID));
    assertEquals(Transit.DUPLICATE, PaymentContract.OrderState.canTransit(OrderState.PAID, OrderState.PAID));
    assertEquals(Transit.ILLEGAL, PaymentContract.OrderState.canTransit(OrderState.REFUNDED, OrderState.PAID));
  }

  @Test
  void envelopeJsonUsesProtoFieldNames() throws Exception {
    Envelope env = Envelopes.newJsonEnvelope(PaymentContract.PaySuccess.SPEC, pay("o-1"), NOW);
    String json = Envelopes.encodeJson(env);
    assertTrue(json.contains("\"biz_key\""), json);
    assertFalse(json.contains("bizKey"), json);
    assertTrue(env.getPayload().toString(StandardCharsets.UTF_8).contains("\"order_id\""));
    assertEquals(pay("o-1"), Envelopes.payload(PaymentContract.PaySuccess.SPEC, Envelopes.decodeJson(json)));
    assertEquals(32, env.getMessageId().length());
    assertThrows(DecodeException.class, () -> Envelopes.decode(new byte[] {1, 2, 3}));
  }

  @Test
  void duplicateDeliveryRunsHandlerOnce() throws Exception {
    byte[] body = Envelopes.encode(Envelopes.newEnvelope(PaymentContract.PaySuccess.SPEC, pay("o-1"), NOW));
    Consumer<PaySuccess> c = consumer((tx, m, env) -> insert(tx, m));
    assertEquals(new Decision.Ack(false), c.process(conn, body));
    assertEquals(new Decision.Ack(true), c.process(conn, body));
    assertEquals(1, count("payments"));
    assertEquals(1, count("msg_dedup"));
  }

  @Test
  void retryableFailureRollsBackClaimAndSchedulesRetry() throws Exception {
    byte[] body = Envelopes.encode(Envelopes.newEnvelope(PaymentContract.PaySuccess.SPEC, pay("o-2"), NOW));
    Decision d = consumer((tx, m, env) -> {
      insert(tx, m);
      throw PaymentContract.error(50301, "db down");
    }).process(conn, body);
    Decision.Retry r = assertInstanceOf(Decision.Retry.class, d);
    assertEquals(1500, r.delayMs()); // d(1) = 1000 plus floor(1000 * 0.5)
    assertEquals(1, r.nextEnvelope().getRetryCount());
    assertEquals(NOW + 1500, r.nextEnvelope().getNotBefore());
    assertEquals("system", r.nextEnvelope().getLastError().getRange());
    assertEquals(50301, r.nextEnvelope().getLastError().getCode());
    assertEquals(NOW, r.nextEnvelope().getFirstFailedAt());
    assertEquals(0, count("payments"));
    assertEquals(0, count("msg_dedup"));
    // The retry is processed, not dropped as a duplicate.
    byte[] retry = Envelopes.encode(r.nextEnvelope().toBuilder().setNotBefore(NOW).build());
    assertEquals(new Decision.Ack(false), consumer((tx, m, env) -> insert(tx, m)).process(conn, retry));
  }

  @Test
  void nonRetryableAndExhaustedAreDeadLettered() throws Exception {
    byte[] body = Envelopes.encode(Envelopes.newEnvelope(PaymentContract.PaySuccess.SPEC, pay("o-3"), NOW));
    Decision d = consumer((tx, m, env) -> {
      throw PaymentContract.error(40001, "unknown order");
    }).process(conn, body);
    assertEquals(new Decision.DeadLetter("non_retryable", 40001, "code 40001: unknown order", 1), d);

    byte[] last = Envelopes.encode(Envelopes.decode(body).toBuilder().setRetryCount(6).build());
    Decision e = consumer((tx, m, env) -> {
      throw new IllegalStateException("boom");
    }).process(conn, last);
    assertEquals(new Decision.DeadLetter("retries_exhausted", 0, "boom", 7), e);
  }

  @Test
  void undecodableAndEarlyMessages() throws Exception {
    Decision d = consumer((tx, m, env) -> {}).process(conn, "not protobuf".getBytes(StandardCharsets.UTF_8));
    assertEquals("decode", assertInstanceOf(Decision.DeadLetter.class, d).reason());
    byte[] early = Envelopes.encode(Envelopes.newEnvelope(PaymentContract.PaySuccess.SPEC, pay("o-4"), NOW)
        .toBuilder().setNotBefore(NOW + 10).build());
    assertEquals(new Decision.Defer(NOW + 10), consumer((tx, m, env) -> {}).process(conn, early));
  }
}
