package io.msgcontract.spring.kafka;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.example.shop.payment.v1.PaymentContract;
import com.example.shop.payment.v1.PaySuccess;
import io.msgcontract.kafka.KafkaConsumerLoop;
import io.msgcontract.kafka.KafkaPublisher;
import io.msgcontract.support.DedupStore;
import io.msgcontract.support.Handler;
import io.msgcontract.support.NonRetryableException;
import io.msgcontract.v1.Envelope;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.kafka.clients.consumer.ConsumerRecord;

/** A plain Java member of the group: runtime-java/kafka's KafkaConsumerLoop on its own thread. */
final class PlainMember implements AutoCloseable {
  final KafkaConsumerLoop loop;
  final Thread thread;
  final List<Throwable> errors = new CopyOnWriteArrayList<>();

  PlainMember(Infra.TestDb db, String ns, Handler<PaySuccess> handler) {
    loop = new KafkaConsumerLoop(Infra.config(ns), Infra.GROUP,
        () -> DriverManager.getConnection(db.url, db.user, db.password));
    loop.register(PaymentContract.PaySuccess.SPEC, Infra.HANDLER, handler);
    thread = new Thread(() -> {
      try {
        loop.run();
      } catch (Throwable e) { // reported by the test
        errors.add(e);
      }
    }, "plain-member");
    thread.start();
  }

  /** The plain member's handler of the shared-group test: records the payment as "plain". */
  static Handler<PaySuccess> recording() {
    return (tx, m, env) -> {
      try (PreparedStatement st = tx.prepareStatement("INSERT INTO payments (order_id, amount, member) VALUES (?, ?, 'plain')")) {
        st.setString(1, m.getOrderId());
        st.setLong(2, m.getAmount());
        st.executeUpdate();
      }
    };
  }

  /**
   * Runs env through a plain member whose handler fails as TestApp's BUSINESS does, and returns its
   * dead letter. The member has a database of its own on the server of kind: in the application's,
   * the message's retry chain says its copy went on already, and the plain member would only
   * acknowledge it.
   */
  static ConsumerRecord<byte[], byte[]> deadLetterOf(Db kind, Envelope env) throws Exception {
    String ns = Infra.namespace();
    try (Infra.TestDb db = new Infra.TestDb(kind);
        KafkaPublisher pub = new KafkaPublisher(Infra.config(ns));
        PlainMember m = new PlainMember(db, ns, (tx, msg, e) -> {
          throw new NonRetryableException(40001, "business", "order unknown");
        })) {
      try (java.sql.Connection c = db.open()) {
        DedupStore.migrate(c);
      }
      pub.publish(env);
      Infra.waitFor("the plain loop's dead letter", () -> m.loop.deadLettered() == 1);
      List<ConsumerRecord<byte[], byte[]>> dead = Infra.readAll(ns + "order-event.dlq");
      assertEquals(1, dead.size());
      return dead.get(0);
    }
  }

  /** The dead letter metadata without its times, which differ from run to run. */
  static String withoutTimes(String meta) {
    return meta.replaceAll("\"(first_failed_at|last_failed_at|dead_at)\":\"[^\"]*\"", "\"$1\":\"-\"");
  }

  @Override
  public void close() {
    loop.close();
    try {
      thread.join(Infra.WAIT.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    if (!errors.isEmpty()) {
      throw new AssertionError("the plain member failed", errors.get(0));
    }
  }
}
