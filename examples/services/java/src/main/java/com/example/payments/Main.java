package com.example.payments;

import com.example.shop.payment.v1.PaySuccess;
import com.example.shop.payment.v1.PaymentContract;
import io.msgcontract.support.Consumer;
import io.msgcontract.support.DedupStore;
import io.msgcontract.support.Envelopes;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;

/** Consumes one PaySuccess delivered twice: the payment is recorded once. */
public final class Main {
  private Main() {}

  /**
   * Runs the example.
   *
   * @param args unused
   * @throws Exception when the database fails
   */
  public static void main(String[] args) throws Exception {
    try (Connection db = DriverManager.getConnection("jdbc:sqlite::memory:");
        Statement st = db.createStatement()) {
      DedupStore.migrate(db);
      st.execute("CREATE TABLE payments (order_id TEXT PRIMARY KEY, amount INTEGER)");
      db.setAutoCommit(false);
      // The consumer: the business write runs in the transaction holding the dedup claim.
      Consumer<PaySuccess> consumer = new Consumer<>(PaymentContract.PaySuccess.SPEC, "record-payment",
          (tx, m, env) -> {
            try (PreparedStatement ins = tx.prepareStatement("INSERT INTO payments VALUES (?, ?)")) {
              ins.setString(1, m.getOrderId());
              ins.setLong(2, m.getAmount());
              ins.executeUpdate();
            }
          });
      PaySuccess paid = PaySuccess.newBuilder().setOrderId("20250101_0001").setAmount(1999).build();
      byte[] body = Envelopes.encode(
          Envelopes.newEnvelope(PaymentContract.PaySuccess.SPEC, paid, System.currentTimeMillis()));
      for (int i = 0; i < 2; i++) { // the broker delivers it twice
        System.out.println("delivery " + (i + 1) + ": " + consumer.process(db, body));
      }
      try (ResultSet rs = st.executeQuery("SELECT count(*) FROM payments")) {
        rs.next();
        System.out.println("payments recorded: " + rs.getInt(1) + " (delivered twice)");
        if (rs.getInt(1) != 1) {
          throw new IllegalStateException("want 1 payment");
        }
      }
    }
  }
}
