package io.msgcontract.support;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.SQLException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * {@link OutboxNotifier} sends one NOTIFY at a time and folds the calls made meanwhile into one
 * more; a failed one is logged and the next is tried. Each send here fails at once, after the first
 * one waits for the test, so a send is an opened connection; OutboxWakeTest sends real ones.
 */
class OutboxNotifierTest {
  @Test
  void callsDuringASendFoldIntoOneMore() throws Exception {
    AtomicInteger opens = new AtomicInteger();
    CountDownLatch sending = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    ConnectionFactory db = () -> {
      if (opens.incrementAndGet() == 1) {
        sending.countDown();
        try {
          release.await();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      throw new SQLException("no database here");
    };
    try (OutboxNotifier n = new OutboxNotifier(db)) {
      n.notifyCommitted();
      assertTrue(sending.await(10, TimeUnit.SECONDS), "no send");
      for (int i = 0; i < 100; i++) {
        n.notifyCommitted(); // returns although the send in flight does not
      }
      assertEquals(1, opens.get(), "a second send while the first is in flight");
      release.countDown();
    }
    assertEquals(2, opens.get(), "the calls during the first send, then close: one more send");
  }

  @Test
  void closeSendsWhatIsAskedForAndLaterCallsDoNothing() {
    AtomicInteger opens = new AtomicInteger();
    OutboxNotifier n = new OutboxNotifier(() -> {
      opens.incrementAndGet();
      throw new SQLException("no database here");
    });
    n.notifyCommitted();
    n.close();
    assertEquals(1, opens.get());
    n.notifyCommitted();
    n.close();
    assertEquals(1, opens.get());
  }
}
