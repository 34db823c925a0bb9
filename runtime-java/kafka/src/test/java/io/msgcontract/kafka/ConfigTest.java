package io.msgcontract.kafka;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.msgcontract.support.Decision;
import io.msgcontract.support.Envelopes;
import io.msgcontract.support.Json;
import io.msgcontract.v1.Envelope;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** The config checks and the dead-letter metadata, without a broker. */
class ConfigTest {
  @Test
  void validateNamesEveryProblem() {
    KafkaConfig c = new KafkaConfig();
    c.namespace = "bad name";
    c.partitions = 0;
    c.batchSize = 0;
    c.clientProperties.setProperty("acks", "1");
    String msg = assertThrows(IllegalArgumentException.class, c::validate).getMessage();
    assertTrue(msg.contains("brokers is required"), msg);
    assertTrue(msg.contains("partitions 0"), msg);
    assertTrue(msg.contains("batchSize 0 must be at least 1"), msg);
    assertTrue(msg.contains("namespace \"bad name\""), msg);
    assertTrue(msg.contains("may not set acks"), msg);
  }

  @Test
  void registryUrlMustBeHttp() {
    KafkaConfig c = new KafkaConfig();
    c.brokers = "127.0.0.1:1";
    c.validate(); // "" is no registry
    for (String ok : new String[] {"http://127.0.0.1:8081", "https://registry.example/prefix/"}) {
      c.registryUrl = ok;
      c.validate();
    }
    for (String bad : new String[] {"127.0.0.1:8081", "ftp://h/", "http://", "http://h/?x=1", "not a url"}) {
      c.registryUrl = bad;
      String msg = assertThrows(IllegalArgumentException.class, c::validate).getMessage();
      assertTrue(msg.contains("registryUrl \"" + bad + "\" is not an http(s) URL"), msg);
    }
  }

  @Test
  void aRegistryThatCannotBeAskedIsUnavailableNotRefused() throws Exception {
    int port;
    try (var s = new java.net.ServerSocket(0)) {
      port = s.getLocalPort(); // closed again: nothing listens there
    }
    SchemaRegistry r = new SchemaRegistry("http://127.0.0.1:" + port, java.time.Duration.ofSeconds(2));
    assertThrows(SchemaRegistry.UnavailableException.class, () -> r.id("order-event-value", 0));
    assertThrows(SchemaRegistry.UnavailableException.class, () -> r.checkSubject(1, "order-event-value"));
  }

  @Test
  void jsonReadsTheRegistrysAnswers() {
    assertEquals(java.util.Map.of("subject", "a b", "version", 3L, "id", 7L),
        Json.parse(" {\"subject\":\"a\\u0020b\", \"version\":3,\"id\":7} "));
    assertEquals(java.util.List.of(1.5, true, java.util.List.of()), Json.parse("[1.5,true,[]]"));
    assertThrows(IllegalArgumentException.class, () -> Json.parse("{\"id\":1"));
    assertThrows(IllegalArgumentException.class, () -> Json.parse("[1] x"));
  }

  @Test
  void anUnreachableClusterIsAnErrorNamingIt() throws Exception {
    int port;
    try (var s = new java.net.ServerSocket(0)) {
      port = s.getLocalPort(); // closed again: nothing listens there
    }
    KafkaConfig c = new KafkaConfig();
    c.brokers = "127.0.0.1:" + port;
    c.connectTimeoutMs = 1000;
    KafkaConsumerLoop loop = new KafkaConsumerLoop(c, "g", () -> {
      throw new java.sql.SQLException("unused");
    });
    loop.register(Fixture.SPEC, Fixture.HANDLER, (tx, m, env) -> {});
    String msg = assertThrows(KafkaRuntimeException.class, loop::run).getMessage();
    assertTrue(msg.contains("kafka: broker 127.0.0.1:" + port + " unreachable after 1000ms"), msg);
  }

  @Test
  void topicNamesAreGos() {
    KafkaConfig c = new KafkaConfig();
    c.brokers = "127.0.0.1:1";
    c.namespace = "ns.";
    try (Topics t = new Topics(c)) {
      assertEquals("ns.orders.retry.billing_v2", t.retry("billing/v2", "orders"));
      assertEquals("ns.orders.dlq", t.dlq("orders"));
      assertEquals("ns.orders.dlq.ops", t.ops("orders"));
      assertEquals("ns.billing", t.group("billing"));
    }
  }

  @Test
  void recordsForAListenerOfOnesOwn() {
    Envelope env = Fixture.envelope("k1");
    var retry = KafkaRecords.retry("ns.", "billing", "orders",
        new Decision.Retry(env.toBuilder().setRetryCount(1).build(), 200));
    assertEquals("ns.orders.retry.billing", retry.topic());
    assertEquals("k1", new String(retry.key(), StandardCharsets.UTF_8));
    assertEquals("orders", new String(retry.headers().lastHeader("msgcontract.topic").value(), StandardCharsets.UTF_8));
    byte[] body = Envelopes.encode(env);
    var dead = KafkaRecords.deadLetter("ns.", "billing", "orders", "h", body,
        new Decision.DeadLetter("non_retryable", 40001, "no", 1), 0);
    assertEquals("ns.orders.dlq", dead.topic());
    assertArrayEquals(body, dead.value());
    String meta = new String(dead.headers().lastHeader("msgcontract.dlq").value(), StandardCharsets.UTF_8);
    assertTrue(meta.contains("\"biz_key\":\"k1\"") && meta.contains("\"reason\":\"non_retryable\""), meta);
  }

  @Test
  void deadLetterJsonHasGosFieldNames() {
    Envelope env = Envelope.newBuilder().setBizKey("k\"1").setEventType("E").setMessageId("m")
        .setFirstFailedAt(1000).build();
    String js = DeadLetters.json(new DeadLetters.Meta("orders", "g", "h", env, "non_retryable", 40001,
        "bad\nline", 2, 2000));
    assertEquals("{\"topic\":\"orders\",\"group\":\"g\",\"handler\":\"h\",\"event_type\":\"E\",\"biz_key\":\"k\\\"1\","
        + "\"message_id\":\"m\",\"envelope\":null,\"reason\":\"non_retryable\",\"code\":40001,\"error\":\"bad\\nline\","
        + "\"attempts\":2,\"first_failed_at\":\"1970-01-01T00:00:01Z\",\"last_failed_at\":\"1970-01-01T00:00:02Z\","
        + "\"dead_at\":\"1970-01-01T00:00:02Z\",\"replay_count\":0}", js);
  }
}
