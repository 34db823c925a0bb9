package io.msgcontract.spring.kafka;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.example.shop.payment.v1.PaymentContract;
import com.example.shop.payment.v1.PaySuccess;
import io.msgcontract.kafka.KafkaPublisher;
import io.msgcontract.support.Envelopes;
import io.msgcontract.v1.Envelope;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.springframework.context.ConfigurableApplicationContext;

/** Deliveries through a started application: dedup, rollback, joining, retries, dead letters. */
class DeliveryTest {
  final String ns = Infra.namespace();
  Infra.TestDb db;
  ConfigurableApplicationContext app;
  KafkaPublisher pub;

  @BeforeEach
  void publisher() {
    TestApp.Script.PRESET.clear();
    pub = new KafkaPublisher(Infra.config(ns));
  }

  @AfterEach
  void close() throws Exception {
    if (app != null) {
      app.close();
    }
    if (pub != null) {
      pub.close();
    }
    if (db != null) {
      db.close();
    }
  }

  static Envelope envelope(String orderId) throws Exception {
    return Envelopes.newEnvelope(PaymentContract.PaySuccess.SPEC,
        PaySuccess.newBuilder().setOrderId(orderId).setAmount(100).setCurrency("EUR").build(), System.currentTimeMillis());
  }

  TestApp.Script script() {
    return app.getBean(TestApp.Script.class);
  }

  long[] counts() {
    return app.getBean(ContractListenerContainers.class).counts(Infra.GROUP);
  }

  /** Waits until the group committed everything: the application has nothing in flight. */
  void waitSettled(long deliveries) throws InterruptedException {
    Infra.waitFor(deliveries + " deliveries settled", () -> {
      long[] n = counts();
      return n[0] + n[1] + n[2] + n[3] >= deliveries;
    });
  }

  @ParameterizedTest
  @EnumSource(Db.class)
  void aDuplicateDeliveredTwiceWritesOneRow(Db kind) throws Exception {
    db = new Infra.TestDb(kind);
    app = Infra.start(db, ns);
    Envelope env = envelope("dup-1");
    pub.publish(env);
    pub.publish(env); // the same message id: a redelivery
    waitSettled(2);
    assertEquals(1, db.count("SELECT count(*) FROM payments WHERE order_id = 'dup-1'"));
    assertEquals(1, db.count("SELECT count(*) FROM msg_dedup WHERE handler = ?", Infra.HANDLER));
    long[] n = counts();
    assertEquals(1, n[0], "handled");
    assertEquals(1, n[1], "deduplicated");
    // The engine commits through the container's consumer (AckMode.MANUAL): the group's offsets reach the end.
    Infra.waitFor("the group's offsets committed", () -> Infra.backlog(ns, "order-event") == 0);
  }

  @ParameterizedTest
  @EnumSource(Db.class)
  void twoConsumersOfOneContainerShareTheGroupEachWithItsEngine(Db kind) throws Exception {
    db = new Infra.TestDb(kind);
    app = Infra.start(db, ns, "msgcontract.concurrency=2");
    String topic = ns + "order-event";
    Infra.waitFor("two consumers holding partitions of " + topic, () -> {
      var m = Infra.members(ns);
      return m.size() == 2 && m.stream().allMatch(d -> d.assignment().topicPartitions().stream()
          .anyMatch(tp -> tp.topic().equals(topic)));
    });
    int n = 30;
    for (int i = 0; i < n; i++) {
      Envelope env = envelope("c-" + i);
      pub.publish(env);
      if (i % 5 == 0) {
        pub.publish(env);
      }
    }
    waitSettled(n + n / 5);
    assertEquals(n, db.count("SELECT count(*) FROM payments"));
    assertEquals(n / 5, counts()[1], "deduplicated");
    long threads = script().seen.stream().map(TestApp.Seen::thread).distinct().count();
    assertEquals(2, threads, "the deliveries ran on " + threads + " consumer threads");
    Infra.waitFor("the group's offsets committed", () -> Infra.backlog(ns, "order-event") == 0);
  }

  @ParameterizedTest
  @EnumSource(Db.class)
  void aFailingBusinessWriteRollsBackTheClaimAndIsRetried(Db kind) throws Exception {
    db = new Infra.TestDb(kind);
    db.exec("INSERT INTO audit (order_id) VALUES ('cv-1')"); // the listener's audit insert will violate the key
    app = Infra.start(db, ns);
    script().actions.put("cv-1", TestApp.Action.AUDIT);
    pub.publish(envelope("cv-1"));
    Infra.waitFor("the first attempt", () -> !script().of("cv-1").isEmpty());
    Infra.waitFor("the retry copy", () -> counts()[2] == 1);
    // The claim went with the failed write: nothing of the first attempt is in the database.
    assertEquals(0, db.count("SELECT count(*) FROM msg_dedup"));
    assertEquals(0, db.count("SELECT count(*) FROM payments"));
    db.exec("DELETE FROM audit WHERE order_id = 'cv-1'");
    Infra.waitFor("the retry handled", () -> counts()[0] == 1);
    List<TestApp.Seen> seen = script().of("cv-1");
    assertEquals(2, seen.size());
    assertEquals(1, seen.get(1).retryCount());
    assertEquals(1, db.count("SELECT count(*) FROM payments WHERE order_id = 'cv-1'"));
    assertEquals(1, db.count("SELECT count(*) FROM audit WHERE order_id = 'cv-1'"));
    assertEquals(1, db.count("SELECT count(*) FROM msg_dedup"));
  }

  @ParameterizedTest
  @EnumSource(Db.class)
  void aTransactionalServiceJoinsTheDeliverysTransaction(Db kind) throws Exception {
    db = new Infra.TestDb(kind);
    app = Infra.start(db, ns);
    script().actions.put("tx-ok", TestApp.Action.LEDGER);
    script().actions.put("tx-bad", TestApp.Action.LEDGER_FAIL);
    pub.publish(envelope("tx-ok"));
    pub.publish(envelope("tx-bad"));
    waitSettled(2);
    TestApp.Seen delivery = script().of("tx-ok").get(0);
    TestApp.Seen ledger = script().of("tx-ok/ledger").get(0);
    assertEquals("msgcontract delivery", delivery.txName());
    assertEquals("msgcontract delivery", ledger.txName(), "the @Transactional service ran in a transaction of its own");
    assertNotNull(delivery.holder());
    assertTrue(delivery.holder() == ledger.holder(), "the service got another connection");
    assertEquals(1, db.count("SELECT count(*) FROM payments WHERE order_id = 'tx-ok'"));
    // The failing service's write and the claim rolled back with the delivery, which is dead-lettered.
    assertEquals(0, db.count("SELECT count(*) FROM payments WHERE order_id = 'tx-bad'"));
    assertEquals(1, db.count("SELECT count(*) FROM msg_dedup"));
    assertEquals(1, counts()[3]);
  }

  @ParameterizedTest
  @EnumSource(Db.class)
  void aRetryRunsOnTheContractsScheduleWithoutHoldingBackAnotherKey(Db kind) throws Exception {
    db = new Infra.TestDb(kind);
    app = Infra.start(db, ns);
    // Two biz_keys of one partition: the second must not wait for the first's retry.
    String slow = "slow-0";
    String fast = null;
    for (int i = 0; fast == null; i++) {
      String k = "fast-" + i;
      if (Infra.partition(bizKey(k)) == Infra.partition(bizKey(slow))) {
        fast = k;
      }
    }
    script().actions.put(slow, TestApp.Action.RETRY_ONCE);
    List<Long> lateness = new ArrayList<>();
    for (int round = 0; round < 3; round++) {
      String s = round == 0 ? slow : slow + "." + round;
      script().actions.put(s, TestApp.Action.RETRY_ONCE);
      String f = round == 0 ? fast : fast + "." + round;
      long before = counts()[0];
      pub.publish(envelope(s));
      pub.publish(envelope(f));
      String sf = s;
      String ff = f;
      Infra.waitFor("the retry of " + s, () -> script().of(sf).size() == 2);
      Infra.waitFor("both handled", () -> counts()[0] == before + 2);
      TestApp.Seen first = script().of(s).get(0);
      TestApp.Seen retry = script().of(s).get(1);
      TestApp.Seen other = script().of(ff).get(0);
      assertTrue(other.atMs() < retry.atMs(), "the other key waited for the retry");
      long delay = retry.notBefore() - first.atMs();
      var policy = PaymentContract.PaySuccess.SPEC.retry();
      assertTrue(delay >= policy.baseDelay(1) - 50 && delay < policy.baseDelay(1) + policy.jitterMs() + 50,
          "backoff " + delay + " ms is not the contract's first delay");
      long late = retry.atMs() - retry.notBefore();
      lateness.add(late);
      System.out.printf("retry delay: not_before - failure = %d ms (contract %d..%d ms), ran %d ms after not_before (%s)%n",
          delay, policy.baseDelay(1), policy.baseDelay(1) + policy.jitterMs(), late, kind);
      assertTrue(late >= 0 && late <= 50, "the retry ran " + late + " ms after its not_before");
    }
    System.out.println("retry lateness after not_before (" + kind + "): " + lateness + " ms");
  }

  static String bizKey(String orderId) throws Exception {
    return PaymentContract.PaySuccess.SPEC.bizKey(PaySuccess.newBuilder().setOrderId(orderId).build());
  }

  @ParameterizedTest
  @EnumSource(Db.class)
  void aDeadLetterCarriesTheHeadersOfThePlainJavaLoop(Db kind) throws Exception {
    db = new Infra.TestDb(kind);
    app = Infra.start(db, ns);
    script().actions.put("poison", TestApp.Action.BUSINESS);
    Envelope env = envelope("poison");
    pub.publish(env);
    Infra.waitFor("the dead letter", () -> counts()[3] == 1);
    assertEquals(0, db.count("SELECT count(*) FROM payments"));
    List<ConsumerRecord<byte[], byte[]>> dead = Infra.readAll(ns + "order-event.dlq");
    assertEquals(1, dead.size());
    ConsumerRecord<byte[], byte[]> spring = dead.get(0);

    // The same poison through a plain KafkaConsumerLoop, in a namespace of its own.
    ConsumerRecord<byte[], byte[]> plain = PlainMember.deadLetterOf(kind, env);

    assertEquals(headerNames(plain), headerNames(spring));
    assertEquals(new String(plain.key(), StandardCharsets.UTF_8), new String(spring.key(), StandardCharsets.UTF_8));
    assertEquals(Envelopes.decode(plain.value()), Envelopes.decode(spring.value()));
    String pm = new String(plain.headers().lastHeader("msgcontract.dlq").value(), StandardCharsets.UTF_8);
    String sm = new String(spring.headers().lastHeader("msgcontract.dlq").value(), StandardCharsets.UTF_8);
    assertEquals(PlainMember.withoutTimes(pm), PlainMember.withoutTimes(sm));
    assertTrue(sm.contains("\"code\":40001") && sm.contains("\"handler\":\"" + Infra.HANDLER + "\""), sm);
  }

  static List<String> headerNames(ConsumerRecord<byte[], byte[]> r) {
    List<String> n = new ArrayList<>();
    r.headers().forEach(h -> n.add(h.key()));
    return n;
  }

  @ParameterizedTest
  @EnumSource(Db.class)
  void aBatchSharesOneTransactionAndAFailingDeliveryRollsBackAlone(Db kind) throws Exception {
    db = new Infra.TestDb(kind);
    // The records are there before the application starts, so its first polls hold several.
    int n = 12;
    for (int i = 0; i < n; i++) {
      pub.publish(envelope("b-" + i));
    }
    for (int i = 0; i < n; i++) {
      TestApp.Script.PRESET.put("b-" + i, i % 4 == 1 ? TestApp.Action.LEDGER_FAIL : TestApp.Action.LEDGER);
    }
    app = Infra.start(db, ns, "msgcontract.batch-size=64");
    waitSettled(n);
    int failing = n / 4;
    assertEquals(n - failing, db.count("SELECT count(*) FROM payments"));
    assertEquals(n - failing, db.count("SELECT count(*) FROM msg_dedup"));
    assertEquals(failing, counts()[3]);
    // Deliveries that shared a transaction share its connection holder; a failing one shared too.
    List<TestApp.Seen> seen = script().seen.stream().filter(s -> !s.orderId().contains("/")).toList();
    long holders = seen.stream().map(s -> System.identityHashCode(s.holder())).distinct().count();
    assertTrue(holders < seen.size(), "every delivery had a transaction of its own: " + holders);
    boolean failedInShared = false;
    for (TestApp.Seen s : seen) {
      int i = Integer.parseInt(s.orderId().substring(2));
      if (i % 4 == 1 && seen.stream().anyMatch(o -> o != s && o.holder() == s.holder())) {
        failedInShared = true;
      }
    }
    assertTrue(failedInShared, "no failing delivery shared a transaction with others");
  }
}
