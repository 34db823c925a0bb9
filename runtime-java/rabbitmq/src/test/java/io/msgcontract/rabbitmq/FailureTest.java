package io.msgcontract.rabbitmq;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** What the broker or the database failing does to the Java member, on the real node. */
class FailureTest extends BrokerTest {
  /**
   * The database is down: the delivery stays unacknowledged (no retry
   * counted, no dead letter), is handed back once its lease ran out
   * (basic.nack, requeue: x-delivery-count goes up), and is handled once
   * when the database is back.
   */
  @Test
  void databaseDownHoldsTheDeliveryHandsItBackAfterItsLeaseThenHandlesItOnce() throws Exception {
    AtomicBoolean down = new AtomicBoolean(true);
    AtomicInteger opens = new AtomicInteger();
    RabbitConfig c = fx.config();
    c.leaseMs = 1500;
    c.dbRetryMs = 100;
    RabbitConsumerLoop l = loop(c, () -> {
      opens.incrementAndGet();
      if (down.get()) {
        throw new SQLException("injected: the database is down");
      }
      return fx.open();
    }, Fixture.SPEC, Fixture.insert("java"));
    publisher().publish(Fixture.envelope("db"));
    Fixture.waitFor("the delivery handed back after its lease", () -> l.requeued() >= 1);
    assertTrue(opens.get() > 1, "the delivery was not run again after dbRetryMs");
    assertEquals(0, l.retried() + l.deadLettered() + l.handled());
    down.set(false);
    Fixture.waitFor("handled once the database is back", () -> l.handled() == 1);
    assertEquals(Map.of("db", 1), fx.effects());
    assertEquals(0, l.retried() + l.deadLettered());
  }

  /**
   * A memory alarm on the node (rabbitmqctl set_vm_memory_high_watermark, as
   * runtime-go's TestPublishersBlocked): a publish fails naming the alarm
   * instead of hanging, the next one at once, and publishing resumes when it
   * clears.
   */
  @Test
  void publishesFailNamingTheAlarmWhileTheBrokerBlocksPublishers() throws Exception {
    RabbitConfig c = fx.config();
    c.publishTimeoutMs = 2000;
    RabbitPublisher pub = new RabbitPublisher(c);
    toClose.add(pub);
    pub.publish(Fixture.envelope("before"));
    ctl("set_vm_memory_high_watermark", "absolute", "1MB");
    try {
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
      String msg = "";
      while (!msg.contains("blocks publishers")) {
        if (System.nanoTime() > deadline) {
          fail("publishing under a memory alarm: \"" + msg + "\"; want an error naming the alarm");
        }
        try {
          pub.publish(Fixture.envelope("during"));
          msg = "";
        } catch (RabbitRuntimeException e) {
          msg = e.getMessage();
        }
      }
      long began = System.nanoTime();
      RabbitRuntimeException e = assertThrows(RabbitRuntimeException.class,
          () -> pub.publish(Fixture.envelope("during-2")));
      assertTrue(e.getMessage().contains("blocks publishers") && e.getMessage().contains("vm_memory_high_watermark"),
          e.getMessage());
      assertTrue(System.nanoTime() - began < TimeUnit.SECONDS.toNanos(1), "the second publish waited");
    } finally {
      ctl("set_vm_memory_high_watermark", "absolute", "2GiB");
    }
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (true) {
      try {
        pub.publish(Fixture.envelope("after"));
        break;
      } catch (RabbitRuntimeException e) {
        if (System.nanoTime() > deadline) {
          throw e;
        }
        Thread.sleep(100);
      }
    }
  }

  /** Runs rabbitmqctl against the node of scripts/with-rabbitmq.sh. */
  private static void ctl(String... args) throws Exception {
    Path dir = Path.of(Fixture.env("MSGCONTRACT_RABBITMQ_DIR"));
    String[] ports = Files.readString(dir.resolve("ports")).trim().split("\\s+");
    assertEquals(3, ports.length, dir + "/ports");
    String node = "msgcontract-test-" + ports[0] + "@localhost";
    List<String> cmd = new ArrayList<>(List.of("/usr/lib/rabbitmq/bin/rabbitmqctl", "-n", node));
    cmd.addAll(List.of(args));
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
    pb.environment().put("HOME", dir.resolve("home").toString());
    pb.environment().put("RABBITMQ_NODENAME", node);
    pb.environment().put("ERL_EPMD_PORT", ports[2]);
    pb.environment().put("RABBITMQ_CONF_ENV_FILE", dir.resolve("rabbitmq-env.conf").toString());
    Process p = pb.start();
    String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
    assertEquals(0, p.waitFor(), "rabbitmqctl " + String.join(" ", args) + ":\n" + out);
  }
}
