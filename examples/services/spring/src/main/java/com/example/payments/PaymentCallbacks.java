package com.example.payments;

import com.example.shop.payment.v1.PaySuccess;
import com.example.shop.payment.v1.PaymentContract;
import io.msgcontract.spring.kafka.ContractOutbox;
import java.sql.SQLException;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

/**
 * The producer side: the payment provider's callback marks the order paid and publishes
 * PaySuccess through the outbox, in one transaction. Providers call back more than once; each
 * call publishes again, and the consumer's dedup (not this code) keeps the effect single.
 */
@Service
public class PaymentCallbacks {
  private final JdbcTemplate jdbc;
  private final ContractOutbox outbox;

  PaymentCallbacks(JdbcTemplate jdbc, ContractOutbox outbox) {
    this.jdbc = jdbc;
    this.outbox = outbox;
  }

  /**
   * Handles one callback of the provider.
   *
   * @param orderId the order paid
   * @param amount the amount, in cents
   * @throws SQLException when the database refuses the outbox row (the order update rolls back)
   */
  @Transactional
  public void paid(String orderId, long amount) throws SQLException {
    jdbc.update("INSERT INTO orders (id, state) VALUES (?, 'PAID') ON CONFLICT (id) DO UPDATE SET state = 'PAID'",
        orderId);
    outbox.publish(PaymentContract.PaySuccess.SPEC,
        PaySuccess.newBuilder().setOrderId(orderId).setAmount(amount).build());
  }
}
