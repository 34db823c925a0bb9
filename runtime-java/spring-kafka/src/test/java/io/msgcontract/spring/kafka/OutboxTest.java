package io.msgcontract.spring.kafka;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.example.shop.payment.v1.PaymentContract;
import com.example.shop.payment.v1.PaySuccess;
import io.msgcontract.support.Envelopes;
import io.msgcontract.v1.Envelope;
import java.util.List;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.springframework.context.ConfigurableApplicationContext;

/** The outbox written in the caller's @Transactional method, and the relay. */
class OutboxTest {
  final String ns = Infra.namespace();
  Infra.TestDb db;
  ConfigurableApplicationContext app;

  @AfterEach
  void close() throws Exception {
    if (app != null) {
      app.close();
    }
    if (db != null) {
      db.close();
    }
  }

  @ParameterizedTest
  @EnumSource(Db.class)
  void theOutboxCommitsOnlyWithTheBusinessWriteAndIsRelayed(Db kind) throws Exception {
    db = new Infra.TestDb(kind);
    app = Infra.start(db, ns, "msgcontract.relay.enabled=true", "msgcontract.relay.interval-ms=50");
    TestApp.Orders orders = app.getBean(TestApp.Orders.class);
    Envelope sent = orders.pay("o-1", false);
    assertThrows(IllegalStateException.class, () -> orders.pay("o-2", true));
    assertEquals(0, db.count("SELECT count(*) FROM orders WHERE id = 'o-2'"));
    assertEquals(1, db.count("SELECT count(*) FROM msg_outbox"), "the failed caller's event was kept");
    Infra.waitFor("the relay", () -> db.count("SELECT count(*) FROM msg_outbox WHERE sent_at > 0") == 1);
    List<ConsumerRecord<byte[], byte[]>> recs = Infra.readAll(ns + "order-event");
    assertEquals(1, recs.size());
    Envelope got = Envelopes.decode(recs.get(0).value());
    assertEquals(sent.getMessageId(), got.getMessageId());
    assertEquals("o-1", PaySuccess.parseFrom(got.getPayload()).getOrderId());
    // The application's own listener consumes what it published.
    Infra.waitFor("the listener", () -> db.count("SELECT count(*) FROM payments WHERE order_id = 'o-1'") == 1);
    assertEquals(1, app.getBean(ContractOutboxRelay.class).published());
  }

  @ParameterizedTest
  @EnumSource(Db.class)
  void publishingWithoutATransactionFailsClearly(Db kind) throws Exception {
    db = new Infra.TestDb(kind);
    app = Infra.start(db, ns);
    ContractOutbox outbox = app.getBean(ContractOutbox.class);
    IllegalStateException e = assertThrows(IllegalStateException.class, () -> outbox.publish(
        PaymentContract.PaySuccess.SPEC, PaySuccess.newBuilder().setOrderId("o-3").setAmount(1).build()));
    assertTrue(e.getMessage().contains("@Transactional"), e.getMessage());
    assertEquals(0, db.count("SELECT count(*) FROM msg_outbox"));
    assertTrue(app.getBeansOfType(ContractOutboxRelay.class).isEmpty(), "the relay runs without msgcontract.relay.enabled");
  }
}
