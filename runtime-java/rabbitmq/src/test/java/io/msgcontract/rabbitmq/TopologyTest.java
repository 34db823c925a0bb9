package io.msgcontract.rabbitmq;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.rabbitmq.client.BuiltinExchangeType;
import com.rabbitmq.client.Channel;
import io.msgcontract.support.Envelopes;
import io.msgcontract.v1.Envelope;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * docs/rabbitmq.md, executed: what the Java member declares, a plain client
 * declares again with the spec's arguments (a difference would fail with 406),
 * and what it publishes carries the spec's properties and headers.
 */
class TopologyTest extends BrokerTest {
  @Test
  void declaredAsTheSpecSays() throws Exception {
    publisher();
    RabbitConsumerLoop l = loop(Fixture.insert("java"));
    String p = fx.prefix;
    try (com.rabbitmq.client.Connection conn = Fixture.plain(); Channel ch = conn.createChannel()) {
      // Each passive-free redeclare is the spec's table, written out here
      // independently of Topology: PRECONDITION_FAILED closes the channel and fails the test.
      ch.exchangeDeclare(p, BuiltinExchangeType.TOPIC, true, false, false, Map.of("alternate-exchange", p + ".unrouted"));
      ch.exchangeDeclare(p + ".retry", BuiltinExchangeType.DIRECT, true, false, false, null);
      ch.exchangeDeclare(p + ".delay", BuiltinExchangeType.DIRECT, true, false, false, null);
      ch.exchangeDeclare(p + ".unrouted", BuiltinExchangeType.FANOUT, true, false, false, null);
      Map<String, Object> quorum = Map.of("x-queue-type", "quorum");
      ch.queueDeclare(p + ".unrouted", true, false, false, quorum);
      ch.queueDeclare(p + ".dlq", true, false, false, quorum);
      ch.queueDeclare(p + "/" + Fixture.GROUP + "/" + Fixture.TOPIC, true, false, false, quorum);
      for (int k = 4; k <= 12; k++) {
        Map<String, Object> args = new HashMap<>(quorum);
        args.put("x-message-ttl", 1L << k); // signed 64-bit
        args.put("x-dead-letter-exchange", p + ".retry");
        args.put("x-dead-letter-strategy", "at-least-once");
        args.put("x-overflow", "reject-publish");
        ch.queueDeclare(p + ".delay/" + Fixture.GROUP + "/" + (1L << k), true, false, false, args);
      }
      assertTrue(ch.isOpen());
    }
    l.close();
    threads.get(0).join(Fixture.WAIT.toMillis());
    // What a publish puts on the wire, read by a plain client from the group's queue.
    RabbitPublisher pub = publisher();
    Envelope env = Fixture.envelope("wire").toBuilder().setNotBefore(System.currentTimeMillis() + 3_600_000).build();
    pub.publish(env);
    Fixture.waitFor("the message in the group's queue", () -> {
      try {
        return Fixture.ready(p + "/" + Fixture.GROUP + "/" + Fixture.TOPIC) == 1;
      } catch (Exception e) {
        return false;
      }
    });
    Fixture.Got g = Fixture.drain(p + "/" + Fixture.GROUP + "/" + Fixture.TOPIC).get(0);
    assertTrue(g.messageId().matches("[0-9a-f]{32}"), g.messageId());
    assertEquals("application/x-protobuf; messageType=msgcontract.v1.Envelope", g.contentType());
    assertEquals(Fixture.TOPIC, g.headers().get("x-msgcontract-topic").toString());
    assertEquals(env.getNotBefore(), g.headers().get("x-msgcontract-not-before"), "a signed 64-bit header");
    assertEquals(env, Envelopes.decode(g.body()));
    // Unroutable: into P.unrouted, not the void.
    pub.publish(Fixture.envelope("nobody").toBuilder().setTopic("nobody-listens").build());
    Fixture.waitFor("the unroutable message in " + p + ".unrouted", () -> {
      try {
        return Fixture.ready(p + ".unrouted") == 1;
      } catch (Exception e) {
        return false;
      }
    });
  }
}
