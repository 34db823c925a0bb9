package io.msgcontract.rocketmq;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.msgcontract.kafka.testpb.OrderNote;
import io.msgcontract.support.Consumer;
import io.msgcontract.support.EventSpec;
import io.msgcontract.support.Handler;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/**
 * A test on the real broker: a fresh fixture with its topics (Fixture.GROUP's
 * retry topic among them), and the loops and publishers it started closed
 * afterwards.
 */
abstract class BrokerTest {
  Fixture fx;
  final List<Throwable> errors = Collections.synchronizedList(new ArrayList<>());
  final List<AutoCloseable> toClose = new ArrayList<>();
  final List<Thread> threads = new ArrayList<>();

  @BeforeEach
  void setUp() throws Exception {
    fx = new Fixture();
    fx.topics(Fixture.GROUP);
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

  RocketPublisher publisher() {
    return publisher(fx.config());
  }

  RocketPublisher publisher(RocketConfig c) {
    RocketPublisher p = new RocketPublisher(c);
    toClose.add(p);
    return p;
  }

  /** Starts a loop of Fixture.GROUP with h on the fixture's database, and waits until it receives. */
  RocketConsumerLoop loop(Handler<OrderNote> h) throws InterruptedException {
    return loop(fx.config(), Fixture.SPEC, h);
  }

  RocketConsumerLoop loop(RocketConfig c, EventSpec<OrderNote> spec, Handler<OrderNote> h)
      throws InterruptedException {
    RocketConsumerLoop l = new RocketConsumerLoop(c, Fixture.GROUP, fx::open);
    l.register(spec, Fixture.HANDLER, new Consumer<>(spec, Fixture.HANDLER, h));
    return start(l);
  }

  RocketConsumerLoop start(RocketConsumerLoop l) throws InterruptedException {
    // closed before the publishers (toClose runs in order)
    toClose.add(0, l);
    threads.add(Fixture.start(l, errors));
    Fixture.waitFor("the loop receiving", () -> l.consuming() || !errors.isEmpty());
    assertEquals(List.of(), errors, "the loop's run() failed");
    return l;
  }
}
