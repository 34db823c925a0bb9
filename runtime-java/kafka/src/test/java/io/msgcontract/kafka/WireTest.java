package io.msgcontract.kafka;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.example.shop.payment.v1.PaySuccess;
import com.google.protobuf.Message;
import com.sun.net.httpserver.HttpServer;
import io.msgcontract.kafka.testpb.OrderNote;
import io.msgcontract.support.Envelopes;
import io.msgcontract.support.EventSpec;
import io.msgcontract.support.Handler;
import io.msgcontract.support.Json;
import io.msgcontract.support.NonRetryableException;
import io.msgcontract.v1.Envelope;
import java.io.File;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.junit.jupiter.api.Test;

/**
 * The Confluent wire format between Java and Go on the real broker, with
 * msgcontract's registry that integration/javakafka's Go test serves
 * (MSGCONTRACT_REGISTRY_URL; subjects orders-value and order-event-value).
 */
class WireTest extends BrokerTest {
  private static String registryUrl() {
    return Fixture.env("MSGCONTRACT_REGISTRY_URL");
  }

  private KafkaConfig config() {
    KafkaConfig c = fx.config();
    c.registryUrl = registryUrl();
    return c;
  }

  private <M extends Message> KafkaConsumerLoop loop(KafkaConfig c, String group, EventSpec<M> spec,
      Handler<M> h) {
    KafkaConsumerLoop l = new KafkaConsumerLoop(c, group, fx::open);
    l.register(spec, Fixture.HANDLER, h);
    toClose.add(l);
    threads.add(Fixture.start(l, errors));
    return l;
  }

  private static SchemaRegistry registry() {
    return new SchemaRegistry(registryUrl(), Duration.ofSeconds(30));
  }

  @Test
  void recordsTheJavaRelayFramedAreAppliedOnceByGo() throws Exception {
    KafkaPublisher pub = new KafkaPublisher(config()).describe(Fixture.SPEC);
    toClose.add(pub);
    int n = 20;
    try (Connection tx = fx.open()) {
      tx.setAutoCommit(false);
      for (int i = 0; i < n; i++) {
        Outbox.write(tx, Fixture.envelope("j" + i));
      }
      tx.commit();
    }
    assertEquals(n, new OutboxRelay(fx::open, pub, 10_000, 100).flush());
    int id = registry().id("orders-value", 0);
    List<ConsumerRecord<byte[], byte[]>> recs = Fixture.readAll(fx.namespace + Fixture.TOPIC);
    assertEquals(n, recs.size());
    for (ConsumerRecord<byte[], byte[]> r : recs) {
      ConfluentFraming.Frame f = ConfluentFraming.parse(r.value());
      assertEquals(id, f.schemaId(), "the frame's id is orders-value's latest");
      assertEquals(List.of(0), f.messageIndexes(), "OrderNote is message 0 of orders.proto, the subject's schema");
      Header h = r.headers().lastHeader(Wire.HEADER_ENVELOPE);
      assertNotNull(h, "no msgcontract.envelope header");
      Envelope head = Envelope.parseFrom(h.value());
      assertTrue(head.getPayload().isEmpty(), "the header carries the payload too");
      assertEquals(head.getBizKey(), new String(r.key(), StandardCharsets.UTF_8));
      assertEquals(head.getBizKey(), OrderNote.parseFrom(f.payload()).getValue());
    }
    File log = fx.dir.resolve("go.log").toFile();
    Process go = new ProcessBuilder(Fixture.env("MSGCONTRACT_KAFKA_GO_PEER"), "-brokers", Fixture.brokers(),
        "-db", fx.dbFile.toString(), "-namespace", fx.namespace, "-group", Fixture.GROUP, "-topic", Fixture.TOPIC,
        "-event-type", Fixture.EVENT_TYPE, "-handler", Fixture.HANDLER, "-note", "go", "-registry", registryUrl())
        .redirectErrorStream(true).redirectOutput(log).start();
    try {
      Fixture.waitFor("an effect per record, or the Go member's exit", () -> {
        try {
          return fx.effects().size() == n || !go.isAlive();
        } catch (Exception e) {
          return false;
        }
      });
      assertTrue(go.isAlive(), "the Go member exited: " + Files.readString(log.toPath()));
      Fixture.waitFor("every record committed", () -> fx.backlog() == 0);
      Map<String, Integer> effects = fx.effects();
      assertEquals(n, effects.size(), "go.log: " + Files.readString(log.toPath()));
      effects.forEach((k, c) -> assertEquals(1, c, "biz_key " + k + " applied " + c + " times"));
      assertEquals(List.of(), Fixture.readAll(fx.namespace + Fixture.TOPIC + ".dlq"), "Go dead-lettered a record");
    } finally {
      go.destroy();
      go.waitFor(60, TimeUnit.SECONDS);
    }
  }

  @Test
  void recordsRuntimeGoFramedAreAppliedOnceByJava() throws Exception {
    // TestJavaKafka published them with runtime-go (shop.payment.v1.PaySuccess, order ids go-0...); the
    // Java class is protoc's, generated from examples/proto by the pom.
    EventSpec<PaySuccess> pay = new EventSpec<>("shop.payment.v1.PaySuccess", "order-event", "PAY_SUCCESS",
        "order_id:{order_id}:PAY_SUCCESS", Fixture.POLICY, Fixture.RULES, "", PaySuccess.getDefaultInstance(),
        PaySuccess::getOrderId);
    int n = Integer.parseInt(Fixture.env("MSGCONTRACT_KAFKA_GO_FRAMED_N"));
    KafkaConfig c = config();
    c.namespace = Fixture.env("MSGCONTRACT_KAFKA_GO_FRAMED_NS");
    KafkaConsumerLoop l = loop(c, "java-reads-go", pay, KafkaLoopTest.insert("java", PaySuccess::getOrderId));
    Fixture.waitFor("an effect per record", () -> l.handled() + l.deadLettered() >= n);
    Map<String, Integer> want = new HashMap<>();
    for (int i = 0; i < n; i++) {
      want.put("go-" + i, 1);
    }
    assertEquals(want, fx.effects());
    assertEquals(0, l.deadLettered());
  }

  @Test
  void aRegistryAnswering503HoldsTheRecordBackAndNeverDeadLettersIt() throws Exception {
    // In front of the real registry: the first 3 id lookups get 503, the rest are passed through.
    AtomicInteger refused = new AtomicInteger();
    HttpClient http = HttpClient.newHttpClient();
    HttpServer proxy = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    proxy.createContext("/", x -> {
      byte[] body;
      int status;
      if (x.getRequestURI().getPath().startsWith("/schemas/ids/") && refused.get() < 3) {
        refused.incrementAndGet();
        status = 503;
        body = "{\"error_code\":50301,\"message\":\"unavailable\"}".getBytes(StandardCharsets.UTF_8);
      } else {
        try {
          HttpResponse<byte[]> r = http.send(HttpRequest.newBuilder(URI.create(registryUrl() + x.getRequestURI()))
              .GET().build(), HttpResponse.BodyHandlers.ofByteArray());
          status = r.statusCode();
          body = r.body();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          status = 502;
          body = new byte[0];
        }
      }
      x.sendResponseHeaders(status, body.length);
      x.getResponseBody().write(body);
      x.close();
    });
    proxy.start();
    try {
      KafkaPublisher pub = new KafkaPublisher(config()).describe(Fixture.SPEC);
      toClose.add(pub);
      pub.publish(Fixture.envelope("held"));
      KafkaConfig c = config();
      c.registryUrl = "http://127.0.0.1:" + proxy.getAddress().getPort();
      KafkaConsumerLoop l = loop(c, Fixture.GROUP, Fixture.SPEC, KafkaLoopTest.insert("java"));
      Fixture.waitFor("the record handled", () -> l.handled() + l.deadLettered() >= 1);
      assertEquals(3, refused.get(), "the loop did not ask the registry again after a 503");
      assertEquals(0, l.deadLettered(), "a registry that could not answer condemned the record");
      assertEquals(Map.of("held", 1), fx.effects());
    } finally {
      proxy.stop(0);
    }
  }

  @Test
  void aForeignRefusedOrHeaderlessFrameGoesToTheSchemaDeadLetter() throws Exception {
    SchemaRegistry reg = registry();
    int own = reg.id("orders-value", 0);
    int foreign = reg.id("order-event-value", 0);
    String topic = fx.namespace + Fixture.TOPIC;
    byte[] payload = Fixture.note("x").toByteArray();
    Map<String, byte[]> bad = new HashMap<>();
    bad.put("foreign", ConfluentFraming.frame(foreign, List.of(0), payload));
    bad.put("refused", ConfluentFraming.frame(987_654, List.of(0), payload));
    bad.put("headerless", ConfluentFraming.frame(own, List.of(0), payload));
    bad.put("bad-frame", new byte[] {0, 0, 0});
    List<ProducerRecord<byte[], byte[]>> recs = new ArrayList<>();
    for (Map.Entry<String, byte[]> e : bad.entrySet()) {
      List<Header> hs = e.getKey().equals("headerless") ? List.of()
          : List.of(new RecordHeader(Wire.HEADER_ENVELOPE, Wire.header(Fixture.envelope(e.getKey()))));
      recs.add(KafkaPublisher.record(topic, e.getKey(), e.getValue(), hs));
    }
    KafkaPublisher pub = new KafkaPublisher(config()).describe(Fixture.SPEC);
    toClose.add(pub);
    pub.topics().ensure(pub.topics().subscriptionTopics(Fixture.GROUP, Fixture.TOPIC));
    pub.sendAll(recs);
    pub.publish(Fixture.envelope("good"));
    KafkaConsumerLoop l = loop(config(), Fixture.GROUP, Fixture.SPEC, KafkaLoopTest.insert("java"));
    Fixture.waitFor("four dead letters and one effect", () -> l.deadLettered() >= 4 && l.handled() >= 1);
    Fixture.waitFor("every record committed", () -> fx.backlog() == 0);
    assertEquals(Map.of("good", 1), fx.effects());
    List<ConsumerRecord<byte[], byte[]>> dead = Fixture.readAll(topic + ".dlq");
    assertEquals(4, dead.size());
    // Each dead letter keeps the delivered bytes: they name which record it is.
    for (ConsumerRecord<byte[], byte[]> r : dead) {
      String what = bad.entrySet().stream().filter(e -> java.util.Arrays.equals(e.getValue(), r.value()))
          .map(Map.Entry::getKey).findFirst().orElse("a record not sent: " + java.util.Arrays.toString(r.value()));
      String meta = new String(r.headers().lastHeader(Topics.HEADER_DLQ).value(), StandardCharsets.UTF_8);
      @SuppressWarnings("unchecked")
      Map<String, Object> m = (Map<String, Object>) Json.parse(meta);
      assertEquals("schema", m.get("reason"), what + ": " + meta);
      assertEquals(-5L, m.get("code"), what + ": " + meta);
      assertTrue(((String) m.get("error")).startsWith("schema: "), what + ": " + meta);
      assertTrue(bad.containsKey(what), what);
    }
  }

  /** text as a JSON string. */
  private static String quote(String text) {
    StringBuilder b = new StringBuilder("\"");
    for (char c : text.toCharArray()) {
      if (c == '"' || c == '\\') {
        b.append('\\').append(c);
      } else if (c < 0x20) {
        b.append(String.format("\\u%04x", (int) c));
      } else {
        b.append(c);
      }
    }
    return b.append('"').toString();
  }

  /** POSTs schema text to the registry's path (under /subjects/) and returns the answer's field. */
  private static long post(String path, String text, String field) throws Exception {
    String body = "{\"schemaType\":\"PROTOBUF\",\"schema\":" + quote(text) + "}";
    HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
        URI.create(registryUrl() + "/subjects/" + path)).header("Content-Type", "application/vnd.schemaregistry.v1+json")
        .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
    assertEquals(200, r.statusCode(), path + ": " + r.body());
    return (Long) ((Map<?, ?>) Json.parse(r.body())).get(field);
  }

  /**
   * A generated producer names no schema_version and frames with the id of the subject's latest version at
   * the time (v1). Consumed after v2 was registered, the envelope the handler gets and the dead letter name
   * v1, the version the frame's id is registered as, not 0 (which the console reads as "latest", v2). A
   * version the producer's envelope names is kept, even when the frame's id is another version's.
   */
  @Test
  void aDeadLetterNamesTheVersionItsFrameIdIsRegisteredAs() throws Exception {
    // A subject of the test's own: v1 is orders-value's schema, v2 adds a field.
    String subject = fx.namespace.replace(".", "") + "-notes-value";
    HttpResponse<String> got = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
        URI.create(registryUrl() + "/subjects/orders-value/versions/1")).GET().build(),
        HttpResponse.BodyHandlers.ofString());
    String v1 = (String) ((Map<?, ?>) Json.parse(got.body())).get("schema");
    int v1Id = (int) post(subject + "/versions", v1, "id");
    assertEquals(1L, post(subject, v1, "version"));
    String topic = fx.namespace + Fixture.TOPIC;
    Map<String, Integer> said = Map.of("unnamed", 0, "named", 2);
    List<ProducerRecord<byte[], byte[]>> recs = new ArrayList<>();
    for (Map.Entry<String, Integer> e : said.entrySet()) {
      Envelope env = Fixture.envelope(e.getKey()).toBuilder().setSchemaSubject(subject)
          .setSchemaVersion(e.getValue()).build();
      recs.add(KafkaPublisher.record(topic, e.getKey(), ConfluentFraming.frame(v1Id, List.of(0),
          env.getPayload().toByteArray()), List.of(new RecordHeader(Wire.HEADER_ENVELOPE, Wire.header(env)))));
    }
    KafkaPublisher pub = new KafkaPublisher(config()).describe(Fixture.SPEC);
    toClose.add(pub);
    pub.topics().ensure(pub.topics().subscriptionTopics(Fixture.GROUP, Fixture.TOPIC));
    pub.sendAll(recs);
    String v2 = v1.replace("string value = 1;", "string value = 1;\n  string note = 2;");
    assertTrue(!v2.equals(v1), "orders-value's schema no longer has string value = 1");
    assertTrue(post(subject + "/versions", v2, "id") != v1Id, "v2 got v1's id");
    assertEquals(2L, post(subject, v2, "version"));

    List<String> seen = Collections.synchronizedList(new ArrayList<>());
    KafkaConsumerLoop l = loop(config(), Fixture.GROUP, Fixture.SPEC, (tx, m, env) -> {
      seen.add(m.getValue() + " " + env.getSchemaSubject() + " v" + env.getSchemaVersion());
      throw new NonRetryableException(40001, "business", "order unknown");
    });
    Fixture.waitFor("two dead letters", () -> l.deadLettered() >= 2);
    List<String> want = List.of("named " + subject + " v2", "unnamed " + subject + " v1");
    assertEquals(want, seen.stream().sorted().toList(), "what the handler saw");
    List<String> dead = new ArrayList<>();
    for (ConsumerRecord<byte[], byte[]> r : Fixture.readAll(topic + ".dlq")) {
      String meta = new String(r.headers().lastHeader(Topics.HEADER_DLQ).value(), StandardCharsets.UTF_8);
      assertTrue(meta.contains("\"non_retryable\""), meta);
      Envelope e = Envelopes.decode(r.value());
      dead.add(OrderNote.parseFrom(e.getPayload()).getValue() + " " + e.getSchemaSubject() + " v"
          + e.getSchemaVersion());
    }
    assertEquals(want, dead.stream().sorted().toList(), "the dead letters");
  }
}
