package io.msgcontract.rocketmq;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The names runtime-go's rocketmq transport uses, and what validate refuses. No broker. */
class ConfigTest {
  @Test
  void namesAreRuntimeGosNames() {
    RocketConfig c = new RocketConfig();
    c.endpoints = "127.0.0.1:8081";
    c.namespace = "ns_";
    c.validate();
    assertEquals(List.of("ns_orders_v1", "ns_billing_retry", "ns_billing", "ns_msgcontract_dlq"),
        List.of(c.topicName("orders.v1"), c.retryTopic("billing"), c.groupName("billing"), c.dlqTopic()));
    // One '_' per character, as Go's per rune: a character outside the BMP is one too.
    assertEquals("pay_____-x", RocketConfig.sanitize("pay.é/\uD83D\uDE00:-x"));
    assertEquals("orders_v1", c.topicOf("ns_orders_v1"));
    assertEquals("other", c.topicOf("other"));
  }

  @Test
  void validateNamesEveryProblem() {
    RocketConfig c = new RocketConfig();
    c.namespace = "a.b";
    c.leaseMs = 5_000;
    c.batchSize = 64;
    c.dbRetryMs = 0;
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, c::validate);
    for (String want : List.of("endpoints is required", "namespace \"a.b\"", "leaseMs 5000 is under 10000",
        "batchSize 64 is outside 1..32", "dbRetryMs 0 must be positive")) {
      assertTrue(e.getMessage().contains(want), want + " not in: " + e.getMessage());
    }
  }

  @Test
  void timerLeadMustFitInTheLease() {
    RocketConfig c = new RocketConfig();
    c.endpoints = "127.0.0.1:8081";
    c.leaseMs = 10_000;
    c.timerLeadMs = 5_000;
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, c::validate);
    assertTrue(e.getMessage().contains("timerLeadMs 5000 leaves no room"), e.getMessage());
  }
}
