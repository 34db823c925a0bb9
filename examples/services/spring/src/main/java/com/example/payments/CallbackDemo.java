package com.example.payments;

import io.msgcontract.spring.kafka.ContractListenerContainers;
import java.time.Duration;
import org.springframework.boot.ApplicationArguments;
import org.springframework.boot.ApplicationRunner;
import org.springframework.boot.ExitCodeGenerator;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Component;

/**
 * The scenario of the field report: the provider calls back twice for one payment. It waits until
 * the listener has settled both deliveries (one handled, one deduplicated), prints how many
 * payments were recorded and ends the application: exit 0 when exactly one.
 */
@Component
public class CallbackDemo implements ApplicationRunner, ExitCodeGenerator {
  private final PaymentCallbacks callbacks;
  private final ContractListenerContainers listeners;
  private final JdbcTemplate jdbc;
  private int exit = 1;

  CallbackDemo(PaymentCallbacks callbacks, ContractListenerContainers listeners, JdbcTemplate jdbc) {
    this.callbacks = callbacks;
    this.listeners = listeners;
    this.jdbc = jdbc;
  }

  @Override
  public void run(ApplicationArguments args) throws Exception {
    jdbc.execute("CREATE TABLE IF NOT EXISTS orders (id TEXT PRIMARY KEY, state TEXT NOT NULL)");
    jdbc.execute("CREATE TABLE IF NOT EXISTS payments (order_id TEXT PRIMARY KEY, amount INTEGER NOT NULL)");
    long[] before = listeners.counts("payments");
    callbacks.paid("20250101_0001", 1999);
    callbacks.paid("20250101_0001", 1999); // the provider's second callback for the same payment
    long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    long[] now = listeners.counts("payments");
    while (settled(now) - settled(before) < 2) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("the two deliveries were not settled within 60 s: handled, deduplicated,"
            + " retried, dead-lettered = " + java.util.Arrays.toString(now));
      }
      Thread.sleep(50);
      now = listeners.counts("payments");
    }
    Integer n = jdbc.queryForObject("SELECT count(*) FROM payments WHERE order_id = ?", Integer.class,
        "20250101_0001");
    System.out.println("deliveries: handled " + (now[0] - before[0]) + ", deduplicated " + (now[1] - before[1]));
    System.out.println("payments recorded: " + n + " (delivered twice)");
    exit = n != null && n == 1 ? 0 : 1;
  }

  private static long settled(long[] c) {
    return c[0] + c[1] + c[3];
  }

  @Override
  public int getExitCode() {
    return exit;
  }
}
