package io.msgcontract.rabbitmq;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** RabbitConfig.validate and the names of docs/rabbitmq.md; no broker. */
class ConfigTest {
  @Test
  void validateNamesEveryProblem() {
    RabbitConfig c = new RabbitConfig();
    c.url = "http://h/";
    c.prefix = "a/b";
    c.topology = Map.of("or#ders", List.of("bil/ling"));
    c.prefetch = 70000;
    c.leaseMs = 0;
    String m = assertThrows(IllegalArgumentException.class, c::validate).getMessage();
    for (String want : List.of("url \"http://h/\" is not an amqp://", "prefix \"a/b\"", "topic \"or#ders\"",
        "group \"bil/ling\"", "prefetch 70000", "leaseMs 0")) {
      assertTrue(m.contains(want), "missing \"" + want + "\" in: " + m);
    }
    c = new RabbitConfig();
    assertTrue(assertThrows(IllegalArgumentException.class, c::validate).getMessage().contains("url is required"));
    c.url = "amqp://guest:secret@127.0.0.1:5672/";
    c.validate();
    assertEquals("amqp://guest:xxxxx@127.0.0.1:5672/", RabbitConfig.redact(c.url));
  }

  @Test
  void namesAndBucketsAreTheSpecs() {
    Topology t = new Topology("msgcontract");
    assertEquals("msgcontract/billing/orders", t.queue("billing", "orders"));
    assertEquals("msgcontract.delay/billing/16", t.delayQueue("billing", 4));
    assertEquals("msgcontract.delay/billing/2147483648", t.delayQueue("billing", 31));
    assertEquals(List.of("msgcontract.retry", "msgcontract.delay", "msgcontract.unrouted", "msgcontract.dlq"),
        List.of(t.retryExchange(), t.delayExchange(), t.unrouted(), t.dlq()));
    assertEquals(-1, Topology.bucket(15));
    assertEquals(4, Topology.bucket(16));
    assertEquals(7, Topology.bucket(200));
    assertEquals(31, Topology.bucket(Long.MAX_VALUE / 2));
    assertTrue(RabbitPublisher.newMessageId().matches("[0-9a-f]{32}"));
    String id = RabbitPublisher.newRecordId(1_700_000_000_123L);
    assertTrue(id.matches("[0-9a-f]{16}-[0-9a-f]{8}"), id);
    assertEquals(String.format("%016x", 1_700_000_000_123_000L), id.substring(0, 16), "µs since the epoch");
  }
}
