package io.msgcontract.rocketmq;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Java and Go services on one broker and one namespace: runtime-go's rocketmq
 * transport in the Go peer (integration/rocketmqmembers/rocketmqpeer,
 * MSGCONTRACT_ROCKETMQ_GO_PEER), built by TestJavaRocketMQ. Each group is
 * consumed by members of one kind: Go's remoting push consumers and the 5.x
 * client's pop consumers keep separate positions (docs/rocketmq.md).
 */
class InteropTest extends BrokerTest {
  private final List<Process> peers = new ArrayList<>();

  @AfterEach
  void stopPeers() throws Exception {
    for (Process p : peers) {
      p.destroy();
      p.waitFor(60, TimeUnit.SECONDS);
      p.destroyForcibly();
    }
  }

  @Test
  void goPublishesJavaConsumes() throws Exception {
    RocketConsumerLoop l = loop(Fixture.insert("java"));
    Fixture.run(fx.peer("publish", "-n", "20", "-key-prefix", "go-"));
    Fixture.waitFor("20 handled", () -> l.handled() == 20);
    Map<String, Integer> effects = fx.effects();
    Fixture.assertOneEach(effects, 20);
    assertTrue(effects.containsKey("go-0") && effects.containsKey("go-19"), effects.toString());
  }

  @Test
  void javaPublishesGoConsumes() throws Exception {
    List<String> cmd = fx.peer("consume", "-db", fx.dbFile.toString(), "-group", "billing-go", "-handler",
        Fixture.HANDLER, "-note", "go");
    File log = fx.dir.resolve("go.log").toFile();
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log).start();
    peers.add(p);
    Fixture.waitFor("the Go member running", () -> {
      try {
        return !p.isAlive() || Files.readString(log.toPath()).contains("rocketmqpeer: running");
      } catch (Exception e) {
        return false;
      }
    });
    assertTrue(p.isAlive(), "the Go member exited: " + Files.readString(log.toPath()));
    RocketPublisher pub = publisher();
    for (int i = 0; i < 20; i++) {
      pub.publish(Fixture.TOPIC, Fixture.envelope("java-" + i));
    }
    Fixture.waitFor("20 effects", () -> fx.effects().size() == 20);
    Fixture.assertOneEach(fx.effects(), 20);
    assertEquals(Set.of("go"), fx.notes());
  }
}
