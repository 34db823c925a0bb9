package io.msgcontract.rocketmq;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/** What RocketTxProducer's constructor refuses, before it connects. No broker. */
class TxProducerArgsTest {
  @Test
  void constructorNamesEveryInvalidArgument() {
    RocketConfig c = new RocketConfig(); // no endpoints
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> new RocketTxProducer(c, null, 0, null, "payments", ""));
    for (String want : List.of("endpoints is required", "db is null", "unresolvedMs 0 must be positive",
        "clock is null", "topics has an empty topic")) {
      assertTrue(e.getMessage().contains(want), want + " not in: " + e.getMessage());
    }
    RocketConfig fifo = new RocketConfig();
    fifo.endpoints = "127.0.0.1:8081";
    fifo.fifoTopics = List.of("orders");
    e = assertThrows(IllegalArgumentException.class, () -> new RocketTxProducer(fifo, () -> null, "payments", "orders"));
    assertTrue(e.getMessage().contains("topic orders is one of cfg.fifoTopics") && !e.getMessage().contains("payments"),
        e.getMessage());
    e = assertThrows(IllegalArgumentException.class, () -> new RocketTxProducer(null, () -> null));
    for (String want : List.of("cfg is null", "no topics")) {
      assertTrue(e.getMessage().contains(want), want + " not in: " + e.getMessage());
    }
  }
}
