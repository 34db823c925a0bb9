package io.msgcontract.spring.kafka;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.example.shop.payment.v1.PaymentContract;
import com.example.shop.payment.v1.PaySuccess;
import io.msgcontract.kafka.KafkaPublisher;
import io.msgcontract.support.Envelopes;
import io.msgcontract.v1.Envelope;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.clients.admin.MemberDescription;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.springframework.context.ConfigurableApplicationContext;

/** A Spring member and a plain Java KafkaConsumerLoop member in one group, on one database. */
class SharedGroupTest {
  final String ns = Infra.namespace();
  Infra.TestDb db;
  ConfigurableApplicationContext app;
  PlainMember plain;

  @AfterEach
  void close() throws Exception {
    if (plain != null) {
      plain.close();
    }
    if (app != null) {
      app.close();
    }
    if (db != null) {
      db.close();
    }
  }

  @ParameterizedTest
  @EnumSource(Db.class)
  void aSpringAndAPlainJavaMemberSplitThePartitionsAndApplyEachMessageOnce(Db kind) throws Exception {
    db = new Infra.TestDb(kind);
    app = Infra.start(db, ns);
    plain = new PlainMember(db, ns, PlainMember.recording());
    String topic = ns + "order-event";
    Infra.waitFor("both members holding partitions of " + topic, () -> {
      List<MemberDescription> m = Infra.members(ns);
      return m.size() == 2 && m.stream().allMatch(d -> d.assignment().topicPartitions().stream()
          .anyMatch(tp -> tp.topic().equals(topic)));
    });
    int n = 60;
    List<Envelope> sent = new ArrayList<>();
    try (KafkaPublisher pub = new KafkaPublisher(Infra.config(ns))) {
      for (int i = 0; i < n; i++) {
        Envelope env = Envelopes.newEnvelope(PaymentContract.PaySuccess.SPEC,
            PaySuccess.newBuilder().setOrderId("s-" + i).setAmount(i).build(), System.currentTimeMillis());
        sent.add(env);
        pub.publish(env);
      }
      for (int i = 0; i < n; i += 3) {
        pub.publish(sent.get(i)); // redeliveries
      }
    }
    long total = n + n / 3;
    ContractListenerContainers spring = app.getBean(ContractListenerContainers.class);
    Infra.waitFor("every delivery settled", () -> {
      long[] s = spring.counts(Infra.GROUP);
      return s[0] + s[1] + plain.loop.handled() + plain.loop.deduplicated() == total;
    });
    assertEquals(n, db.count("SELECT count(*) FROM payments"));
    assertEquals(n, db.count("SELECT count(DISTINCT order_id) FROM payments"));
    assertEquals(n, db.count("SELECT count(*) FROM msg_dedup"));
    long bySpring = db.count("SELECT count(*) FROM payments WHERE member = 'spring'");
    long byPlain = db.count("SELECT count(*) FROM payments WHERE member = 'plain'");
    assertTrue(bySpring > 0 && byPlain > 0, "spring " + bySpring + ", plain " + byPlain);
    long[] s = spring.counts(Infra.GROUP);
    assertEquals(n, s[0] + plain.loop.handled());
    assertEquals(n / 3, s[1] + plain.loop.deduplicated());
  }
}
