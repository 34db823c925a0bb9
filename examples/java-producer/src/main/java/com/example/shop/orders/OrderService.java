package com.example.shop.orders;

import com.example.shop.payment.v1.PaySuccess;
import com.example.shop.payment.v1.PaymentContract;
import com.example.shop.payment.v1.RefundRequested;
import com.example.shop.payment.v1.RefundSuccess;
import com.google.protobuf.Message;
import io.msgcontract.observe.Tracing;
import io.msgcontract.support.BizKeyException;
import io.msgcontract.support.Envelopes;
import io.msgcontract.support.EventSpec;
import io.msgcontract.v1.Envelope;
import io.opentelemetry.api.GlobalOpenTelemetry;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Scope;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * The example order service: it publishes PaySuccess, RefundRequested and RefundSuccess
 * through the generated Java producer code.
 *
 * <p>The pattern to copy: every event is built by the generated {@code Envelopes.newEnvelope},
 * which renders the biz_key from the contract's template, and written to the outbox table in the
 * same JDBC transaction as the business row. A relay publishes the outbox; a crash between the
 * business write and the publish loses nothing.
 *
 * <p>To show that consumers cope with at-least-once delivery, every event is written twice and
 * every third one three times, each copy under a fresh message id and the same biz_key, as a
 * producer retrying after a timeout would.
 *
 * <p>Tracing: each order's transaction runs in a span ({@code OrderService.pay}, ...) of the
 * OpenTelemetry API, and {@code Tracing.inject} writes it into every envelope the transaction
 * stores, so the relay and both consumers continue that trace. Without an OpenTelemetry SDK (the
 * demo adds one, configured by OTEL_* variables, under {@code make demo TRACE=1}) the API is a
 * no-op and the envelopes carry no trace.
 *
 * <p>Usage: {@code OrderService DB PHASE COUNT} where PHASE is {@code pay}, {@code
 * refund-request} or {@code refund}.
 */
public final class OrderService {
  /** Orders whose number is a multiple of this are refunded. */
  static final int REFUND_EVERY = 4;

  /** An order that is paid but never asked for a refund, yet gets a refund confirmation. */
  static final int ILLEGAL_REFUND_ORDER = 2;

  private static final Tracer TRACER = GlobalOpenTelemetry.getTracer("com.example.shop.orders");

  private OrderService() {}

  /** A unit of work of one order: its business rows and its outbox rows, in one transaction. */
  @FunctionalInterface
  interface Work {
    int run() throws SQLException, BizKeyException;
  }

  /** Runs work and commits, inside the span name for orderId; returns the outbox rows written. */
  static int traced(Connection conn, String name, String orderId, Work work) throws SQLException, BizKeyException {
    Span span = TRACER.spanBuilder(name).setAttribute("order.id", orderId).startSpan();
    Scope scope = span.makeCurrent();
    try {
      int rows = work.run();
      conn.commit();
      return rows;
    } finally {
      scope.close();
      span.end();
    }
  }

  /** Entry point; see the class comment. */
  public static void main(String[] args) throws SQLException, BizKeyException {
    if (args.length != 3) {
      System.err.println("usage: OrderService DB pay|refund-request|refund COUNT");
      System.exit(2);
    }
    int count = Integer.parseInt(args[2]);
    try (Connection conn = DriverManager.getConnection("jdbc:sqlite:" + args[0])) {
      try (Statement st = conn.createStatement()) {
        st.execute("PRAGMA busy_timeout = 30000");
        st.execute(
            "CREATE TABLE IF NOT EXISTS orders (order_id TEXT PRIMARY KEY, amount BIGINT NOT NULL,"
                + " refund_id TEXT NOT NULL DEFAULT '')");
      }
      conn.setAutoCommit(false);
      int rows =
          switch (args[1]) {
            case "pay" -> pay(conn, count);
            case "refund-request" -> refundRequests(conn, count);
            case "refund" -> refunds(conn, count);
            default -> throw new IllegalArgumentException("unknown phase " + args[1]);
          };
      System.out.printf("java order service: phase %s wrote %d outbox rows%n", args[1], rows);
    }
  }

  static String orderId(int i) {
    return String.format("20250101_%04d", i);
  }

  static long amount(int i) {
    return 1000L + 7L * i;
  }

  static int copies(int i) {
    return i % 3 == 0 ? 3 : 2;
  }

  /** Creates each order and publishes its payment confirmation, in one transaction per order. */
  static int pay(Connection conn, int count) throws SQLException, BizKeyException {
    int rows = 0;
    for (int i = 1; i <= count; i++) {
      int n = i;
      rows += traced(conn, "OrderService.pay", orderId(n), () -> {
        try (PreparedStatement ins =
            conn.prepareStatement("INSERT INTO orders (order_id, amount) VALUES (?, ?)")) {
          ins.setString(1, orderId(n));
          ins.setLong(2, amount(n));
          ins.executeUpdate();
        }
        PaySuccess ev =
            PaySuccess.newBuilder()
                .setOrderId(orderId(n))
                .setAmount(amount(n))
                .setCurrency("CNY")
                .build();
        return publish(conn, PaymentContract.PaySuccess.SPEC, ev, copies(n));
      });
    }
    return rows;
  }

  /** Customers of every fourth order ask for their money back. */
  static int refundRequests(Connection conn, int count) throws SQLException, BizKeyException {
    int rows = 0;
    for (int i = REFUND_EVERY; i <= count; i += REFUND_EVERY) {
      int n = i;
      rows += traced(conn, "OrderService.refundRequest", orderId(n), () -> {
        String refundId = "R" + orderId(n);
        try (PreparedStatement up =
            conn.prepareStatement("UPDATE orders SET refund_id = ? WHERE order_id = ?")) {
          up.setString(1, refundId);
          up.setString(2, orderId(n));
          up.executeUpdate();
        }
        RefundRequested ev =
            RefundRequested.newBuilder()
                .setOrderId(orderId(n))
                .setRefundId(refundId)
                .setAmount(amount(n))
                .build();
        return publish(conn, PaymentContract.RefundRequested.SPEC, ev, copies(n));
      });
    }
    return rows;
  }

  /**
   * The provider confirms the requested refunds, and one refund nobody requested: consumers must
   * reject that one as an illegal transition (PAID to REFUNDED skips REFUNDING).
   */
  static int refunds(Connection conn, int count) throws SQLException, BizKeyException {
    int rows = 0;
    for (int i = REFUND_EVERY; i <= count; i += REFUND_EVERY) {
      int n = i;
      RefundSuccess ev =
          RefundSuccess.newBuilder()
              .setOrderId(orderId(i))
              .setRefundId("R" + orderId(i))
              .setAmount(amount(i))
              .build();
      rows += traced(conn, "OrderService.refund", orderId(i),
          () -> publish(conn, PaymentContract.RefundSuccess.SPEC, ev, copies(n)));
    }
    RefundSuccess illegal =
        RefundSuccess.newBuilder()
            .setOrderId(orderId(ILLEGAL_REFUND_ORDER))
            .setRefundId("R-unrequested")
            .setAmount(amount(ILLEGAL_REFUND_ORDER))
            .build();
    rows += traced(conn, "OrderService.refund", illegal.getOrderId(),
        () -> publish(conn, PaymentContract.RefundSuccess.SPEC, illegal, 1));
    return rows;
  }

  /** Writes copies envelopes of message to the outbox in conn's transaction. */
  static <M extends Message> int publish(Connection conn, EventSpec<M> spec, M message, int copies)
      throws SQLException, BizKeyException {
    try (PreparedStatement out =
        conn.prepareStatement(
            "INSERT INTO msg_outbox (topic, biz_key, message_id, envelope, created_at)"
                + " VALUES (?, ?, ?, ?, ?)")) {
      for (int c = 0; c < copies; c++) {
        long now = System.currentTimeMillis();
        // The transaction's span goes into the envelope: consumers continue its trace.
        Envelope env = Tracing.inject(Envelopes.newEnvelope(spec, message, now));
        out.setString(1, env.getTopic());
        out.setString(2, env.getBizKey());
        out.setString(3, env.getMessageId());
        out.setBytes(4, Envelopes.encode(env));
        out.setLong(5, now);
        out.executeUpdate();
      }
    }
    return copies;
  }
}
