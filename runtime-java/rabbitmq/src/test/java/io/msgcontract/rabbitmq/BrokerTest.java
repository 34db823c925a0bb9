package io.msgcontract.rabbitmq;

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

/** A test on the real broker: a fresh fixture, and the loops and publishers it started closed afterwards. */
abstract class BrokerTest {
  Fixture fx;
  final List<Throwable> errors = Collections.synchronizedList(new ArrayList<>());
  final List<AutoCloseable> toClose = new ArrayList<>();
  final List<Thread> threads = new ArrayList<>();

  @BeforeEach
  void setUp() throws Exception {
    Fixture.url();
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

  RabbitPublisher publisher() {
    RabbitPublisher p = new RabbitPublisher(fx.config());
    toClose.add(p);
    return p;
  }

  /** Starts a loop of Fixture.GROUP with h on the fixture's database, and waits until it consumes. */
  RabbitConsumerLoop loop(Handler<OrderNote> h) throws InterruptedException {
    return loop(fx.config(), fx::open, Fixture.SPEC, h);
  }

  RabbitConsumerLoop loop(RabbitConfig c, ConnectionFactory db, EventSpec<OrderNote> spec, Handler<OrderNote> h)
      throws InterruptedException {
    RabbitConsumerLoop l = new RabbitConsumerLoop(c, Fixture.GROUP, db);
    l.register(spec, Fixture.HANDLER, new Consumer<>(spec, Fixture.HANDLER, h));
    // closed before the publishers (toClose runs in order): its last acks need no publisher
    toClose.add(0, l);
    threads.add(Fixture.start(l, errors));
    Fixture.waitFor("the loop consuming", () -> l.consuming() || !errors.isEmpty());
    assertEquals(List.of(), errors, "the loop's run() failed");
    return l;
  }
}
