package com.example.payments;

import com.example.shop.payment.v1.PaySuccess;
import com.example.shop.payment.v1.PaymentContract;
import io.msgcontract.spring.kafka.ContractListener;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Component;

/**
 * The consumer side: records each payment once. The dedup claim and this INSERT commit in one
 * transaction, so a second delivery of the same payment never reaches the method, and a failed
 * INSERT takes the claim back with it.
 */
@Component
public class PaymentLedger {
  private final JdbcTemplate jdbc;

  PaymentLedger(JdbcTemplate jdbc) {
    this.jdbc = jdbc;
  }

  @ContractListener(spec = PaymentContract.PaySuccess.class, handler = "record-payment")
  void record(PaySuccess m) {
    jdbc.update("INSERT INTO payments (order_id, amount) VALUES (?, ?)", m.getOrderId(), m.getAmount());
  }
}
