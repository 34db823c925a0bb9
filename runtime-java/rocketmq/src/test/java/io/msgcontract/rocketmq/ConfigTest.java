package io.msgcontract.rocketmq;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.msgcontract.v1.Envelope;
import java.util.List;
import java.util.Optional;
import org.apache.rocketmq.client.apis.ClientServiceProvider;
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
  void fifoTopicsAndGroups() {
    RocketConfig c = new RocketConfig();
    c.endpoints = "127.0.0.1:8081";
    c.fifoTopics = null;
    c.fifoGroups = java.util.Arrays.asList("billing", "");
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, c::validate);
    for (String want : List.of("fifoTopics is null (use List.of())", "fifoGroups has an empty or null name")) {
      assertTrue(e.getMessage().contains(want), want + " not in: " + e.getMessage());
    }
    c.namespace = "ns_";
    c.fifoTopics = List.of("orders.v1");
    c.fifoGroups = List.of("billing");
    c.validate();
    assertTrue(c.isFifoTopic("orders.v1") && !c.isFifoTopic("orders_v1") && c.isFifoGroup("billing"));
    // A FIFO group reads its retry topic as the non-orderly group named like it; a normal group reads all as itself.
    RocketConsumerLoop fifo = new RocketConsumerLoop(c, "billing", () -> null);
    assertEquals(List.of("ns_billing_retry", "ns_billing"),
        List.of(fifo.consumerGroup("ns_billing_retry"), fifo.consumerGroup("ns_orders_v1")));
    RocketConsumerLoop normal = new RocketConsumerLoop(c, "shipping", () -> null);
    assertEquals(List.of("ns_shipping", "ns_shipping"),
        List.of(normal.consumerGroup("ns_shipping_retry"), normal.consumerGroup("ns_orders_v1")));
  }

  @Test
  void aFifoTopicsMessagesCarryTheBizKeyAsTheirGroup() {
    RocketConfig c = new RocketConfig();
    c.endpoints = "127.0.0.1:8081";
    c.fifoTopics = List.of("orders");
    ClientServiceProvider p = ClientServiceProvider.loadService();
    Envelope env = Envelope.newBuilder().setBizKey("order_id:7:PAID").setMessageId("m1").build();
    assertEquals(Optional.of("order_id:7:PAID"),
        RocketPublisher.eventMessage(p, c, "orders", env, new byte[] {1}).build().getMessageGroup());
    assertEquals(Optional.empty(), RocketPublisher.eventMessage(p, c, "other", env, new byte[] {1}).build()
        .getMessageGroup(), "a normal topic's message has no group");
    assertEquals("m1", RocketPublisher.messageGroup(env.toBuilder().clearBizKey().build()));
    // What the proxy refuses as a group (64 bytes or more, blank, a control character) becomes "sha256:" and the
    // start of its SHA-256 in hex, 63 bytes, as the Python member's.
    String longKey = "k".repeat(64);
    String g = RocketPublisher.messageGroup(env.toBuilder().setBizKey(longKey).build());
    // hashlib.sha256(("k" * 64).encode()).hexdigest()[:56], what Python's message_group gives
    assertEquals("sha256:2519b49bcf69feac270ac3c8631539e8caed4c7e6a62c6cc5511228a", g);
    assertEquals(g, RocketPublisher.messageGroup(env.toBuilder().setBizKey(longKey).setMessageId("m2").build()));
    assertEquals("k".repeat(63), RocketPublisher.messageGroup(env.toBuilder().setBizKey("k".repeat(63)).build()));
    for (String bad : List.of(" ", "a\nb", "é".repeat(32))) {
      assertTrue(RocketPublisher.messageGroup(env.toBuilder().setBizKey(bad).build()).matches("sha256:[0-9a-f]{56}"),
          bad);
    }
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> RocketPublisher.messageGroup(Envelope.getDefaultInstance()));
    assertTrue(e.getMessage().contains("neither biz_key nor message id"), e.getMessage());
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
