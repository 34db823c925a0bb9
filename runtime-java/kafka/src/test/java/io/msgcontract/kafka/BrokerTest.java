package io.msgcontract.kafka;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/**
 * What the broker tests share: a fresh {@link Fixture} per test, and the
 * loops, publishers and loop threads the test started, closed and joined
 * after it; a loop whose run() failed fails the test.
 */
abstract class BrokerTest {
  Fixture fx;
  final List<Throwable> errors = Collections.synchronizedList(new ArrayList<>());
  final List<AutoCloseable> toClose = new ArrayList<>();
  final List<Thread> threads = new ArrayList<>();

  @BeforeEach
  void setUp() throws Exception {
    fx = new Fixture();
  }

  @AfterEach
  void tearDown() throws Exception {
    for (AutoCloseable c : toClose) {
      c.close();
    }
    for (Thread t : threads) {
      t.join(Fixture.WAIT.toMillis());
    }
    if (fx != null) {
      fx.close();
    }
    assertEquals(List.of(), errors, "the loop's run() failed");
  }
}
