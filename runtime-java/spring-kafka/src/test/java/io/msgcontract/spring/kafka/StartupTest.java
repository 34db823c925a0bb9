package io.msgcontract.spring.kafka;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.example.shop.payment.v1.PaySuccess;
import com.google.protobuf.StringValue;
import io.msgcontract.kafka.KafkaPublisher;
import io.msgcontract.support.Envelopes;
import io.msgcontract.v1.Envelope;
import java.util.Set;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;
import org.springframework.jdbc.core.JdbcTemplate;

/** Start-up: the settings' validation, and how a listener's spec is found or not. */
class StartupTest {
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

  static String failure(Infra.TestDb db, String ns, Class<?>[] sources, String... more) {
    Throwable e = assertThrows(Exception.class, () -> Infra.start(sources, db, ns, more).close());
    StringBuilder all = new StringBuilder();
    for (Throwable t = e; t != null; t = t.getCause()) {
      all.append(t.getMessage()).append('\n');
    }
    return all.toString();
  }

  @ParameterizedTest
  @EnumSource(Db.class)
  void aMissingGroupFailsTheStartNamingTheProperty(Db kind) throws Exception {
    db = new Infra.TestDb(kind);
    String msg = failure(db, ns, new Class<?>[] {TestApp.class}, "msgcontract.group=");
    assertTrue(msg.contains("msgcontract.group is not set: set it to the consumer group"), msg);
  }

  @ParameterizedTest
  @EnumSource(Db.class)
  void invalidSettingsAreEachNamed(Db kind) throws Exception {
    db = new Infra.TestDb(kind);
    String msg = failure(db, ns, new Class<?>[] {TestApp.class}, "msgcontract.batch-size=0",
        "msgcontract.namespace=bad ns", "msgcontract.registry-url=ftp://registry", "msgcontract.relay.interval-ms=-1",
        "msgcontract.relay.enabled=true");
    for (String p : new String[] {"msgcontract.batch-size is 0", "msgcontract.namespace \"bad ns\"",
        "msgcontract.registry-url \"ftp://registry\"", "msgcontract.relay.interval-ms is -1"}) {
      assertTrue(msg.contains(p), "no \"" + p + "\" in: " + msg);
    }
  }

  /** A listener of another group whose spec is looked up from its message class. */
  @Import(AuditConfig.Audit.class)
  static class AuditConfig {
    static class Audit {
      final JdbcTemplate jdbc;

      Audit(DataSource ds) {
        jdbc = new JdbcTemplate(ds);
      }

      @ContractListener(handler = "audit-payment", group = "audit")
      public void onPaid(PaySuccess m) {
        jdbc.update("INSERT INTO audit (order_id) VALUES (?)", m.getOrderId());
      }
    }
  }

  @ParameterizedTest
  @EnumSource(Db.class)
  void aSpecIsFoundFromTheMessageClassAndAGroupOfItsOwnRuns(Db kind) throws Exception {
    db = new Infra.TestDb(kind);
    app = Infra.start(new Class<?>[] {TestApp.class, AuditConfig.class}, db, ns);
    ContractListenerContainers c = app.getBean(ContractListenerContainers.class);
    assertEquals(Set.of(Infra.GROUP, "audit"), c.groups());
    Envelope env = Envelopes.newEnvelope(com.example.shop.payment.v1.PaymentContract.PaySuccess.SPEC,
        PaySuccess.newBuilder().setOrderId("both").setAmount(5).build(), System.currentTimeMillis());
    try (KafkaPublisher pub = new KafkaPublisher(Infra.config(ns))) {
      pub.publish(env);
    }
    // Each group gets the event: two handlers, two claims.
    Infra.waitFor("both groups", () -> db.count("SELECT count(*) FROM audit WHERE order_id = 'both'") == 1
        && db.count("SELECT count(*) FROM payments WHERE order_id = 'both'") == 1);
    assertEquals(2, db.count("SELECT count(*) FROM msg_dedup"));
  }

  /** A listener of a message that belongs to no contract. */
  @Import(Orphan.Listener.class)
  static class Orphan {
    static class Listener {
      @ContractListener(handler = "orphan")
      public void on(StringValue v) {}
    }
  }

  @ParameterizedTest
  @EnumSource(Db.class)
  void aListenerWhoseSpecCannotBeFoundFailsTheStart(Db kind) throws Exception {
    db = new Infra.TestDb(kind);
    String msg = failure(db, ns, new Class<?>[] {TestApp.class, Orphan.class});
    assertTrue(msg.contains("@ContractListener") && msg.contains(".on: no contract spec for com.google.protobuf.StringValue")
        && msg.contains("spec = PaymentContract.PaySuccess.class"), msg);
  }
}
