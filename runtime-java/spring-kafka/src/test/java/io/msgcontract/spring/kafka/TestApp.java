package io.msgcontract.spring.kafka;

import com.example.shop.payment.v1.PaymentContract;
import com.example.shop.payment.v1.PaySuccess;
import io.msgcontract.support.NonRetryableException;
import io.msgcontract.support.RetryableException;
import io.msgcontract.v1.Envelope;
import java.sql.SQLException;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import javax.sql.DataSource;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Import;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.annotation.EnableTransactionManagement;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/** The application the tests start: a listener of PaySuccess whose behaviour each test scripts. */
@SpringBootConfiguration
@EnableAutoConfiguration
@EnableTransactionManagement
@Import({TestApp.Script.class, TestApp.Ledger.class, TestApp.Payments.class, TestApp.Orders.class})
class TestApp {

  /** What the listener does with an order id. */
  enum Action {
    /** Records the payment. */
    OK,
    /** Fails retryably (code 50001) on the first delivery, records it on the retry. */
    RETRY_ONCE,
    /** Records the payment, then fails with a business error (code 40001, dead-lettered). */
    BUSINESS,
    /** Writes audit(order_id) first, which the test may have taken already: a constraint violation. */
    AUDIT,
    /** Records through the @Transactional Ledger, which joins the delivery's transaction. */
    LEDGER,
    /** The @Transactional Ledger records, then fails (code 40002): rollback-only, dead-lettered. */
    LEDGER_FAIL,
    /**
     * Records the payment and publishes PaySuccess "fwd-&lt;order id&gt;-&lt;this application's id&gt;" through the
     * outbox, in the delivery's transaction (an id per application: a consumer of the events of two
     * applications would deduplicate a second event of one biz_key).
     */
    FORWARD
  }

  /** One delivery the listener saw. */
  record Seen(String orderId, int retryCount, long notBefore, long atMs, String txName, Object holder, String thread) {}

  /** The tests' script and the listener's record of what it saw. */
  static class Script {
    /** What a test sets before it starts the application; each new Script starts with a copy. */
    static final Map<String, Action> PRESET = new ConcurrentHashMap<>();

    final Map<String, Action> actions = new ConcurrentHashMap<>(PRESET);
    final List<Seen> seen = new CopyOnWriteArrayList<>();

    Action action(String orderId) {
      return actions.getOrDefault(orderId, Action.OK);
    }

    List<Seen> of(String orderId) {
      return seen.stream().filter(s -> s.orderId().equals(orderId)).toList();
    }
  }

  /** A @Transactional service the listener calls: it joins the delivery's transaction. */
  static class Ledger {
    final JdbcTemplate jdbc;
    final Script script;

    Ledger(DataSource ds, Script script) {
      this.jdbc = new JdbcTemplate(ds);
      this.script = script;
    }

    @Transactional
    public String record(PaySuccess m) {
      jdbc.update("INSERT INTO payments (order_id, amount, member) VALUES (?, ?, 'spring')", m.getOrderId(), m.getAmount());
      return TransactionSynchronizationManager.getCurrentTransactionName();
    }

    @Transactional(rollbackFor = Exception.class)
    public void recordAndFail(PaySuccess m) throws NonRetryableException {
      jdbc.update("INSERT INTO payments (order_id, amount, member) VALUES (?, ?, 'spring')", m.getOrderId(), m.getAmount());
      throw new NonRetryableException(40002, "business", "the ledger refused " + m.getOrderId());
    }
  }

  /** The listener. */
  static class Payments {
    final JdbcTemplate jdbc;
    final Ledger ledger;
    final Script script;
    final DataSource ds;
    final ContractOutbox outbox;
    final String instance = java.util.UUID.randomUUID().toString().substring(0, 8);

    Payments(DataSource ds, Ledger ledger, Script script, ContractOutbox outbox) {
      this.jdbc = new JdbcTemplate(ds);
      this.ledger = ledger;
      this.script = script;
      this.ds = ds;
      this.outbox = outbox;
    }

    @ContractListener(spec = PaymentContract.PaySuccess.class, handler = Infra.HANDLER)
    public void onPaid(PaySuccess m, Envelope env) throws Exception {
      String txName = TransactionSynchronizationManager.getCurrentTransactionName();
      script.seen.add(new Seen(m.getOrderId(), env.getRetryCount(), env.getNotBefore(), System.currentTimeMillis(),
          txName, TransactionSynchronizationManager.getResource(ds), Thread.currentThread().getName()));
      switch (script.action(m.getOrderId())) {
        case OK -> insert(m);
        case RETRY_ONCE -> {
          if (env.getRetryCount() == 0) {
            throw new RetryableException(50001, "system", "the bank is down");
          }
          insert(m);
        }
        case BUSINESS -> {
          insert(m);
          throw new NonRetryableException(40001, "business", "order unknown");
        }
        case AUDIT -> {
          jdbc.update("INSERT INTO audit (order_id) VALUES (?)", m.getOrderId());
          insert(m);
        }
        case LEDGER -> {
          String joined = ledger.record(m);
          script.seen.add(new Seen(m.getOrderId() + "/ledger", env.getRetryCount(), 0, System.currentTimeMillis(), joined,
              TransactionSynchronizationManager.getResource(ds), Thread.currentThread().getName()));
        }
        case LEDGER_FAIL -> ledger.recordAndFail(m);
        case FORWARD -> {
          insert(m);
          outbox.publish(PaymentContract.PaySuccess.SPEC,
              PaySuccess.newBuilder().setOrderId("fwd-" + m.getOrderId() + "-" + instance).setAmount(m.getAmount()).build());
        }
      }
    }

    private void insert(PaySuccess m) {
      jdbc.update("INSERT INTO payments (order_id, amount, member) VALUES (?, ?, 'spring')", m.getOrderId(), m.getAmount());
    }
  }

  /** A producer: the order's row and its event, in one transaction. */
  static class Orders {
    final JdbcTemplate jdbc;
    final ContractOutbox outbox;

    Orders(DataSource ds, ContractOutbox outbox) {
      this.jdbc = new JdbcTemplate(ds);
      this.outbox = outbox;
    }

    @Transactional(rollbackFor = Exception.class)
    public Envelope pay(String orderId, boolean fail) throws SQLException {
      jdbc.update("INSERT INTO orders (id) VALUES (?)", orderId);
      Envelope env = outbox.publish(PaymentContract.PaySuccess.SPEC,
          PaySuccess.newBuilder().setOrderId(orderId).setAmount(100).setCurrency("EUR").build());
      if (fail) {
        throw new IllegalStateException("the caller failed after publishing");
      }
      return env;
    }
  }
}
