package io.msgcontract.kafka;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import com.google.protobuf.ByteString;
import io.msgcontract.support.Json;
import io.msgcontract.v1.Envelope;
import io.msgcontract.v1.TraceContext;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The golden frames of testdata/kafka-wire/frames.json, which runtime-go and
 * runtime-python check too: the three languages write and read the same bytes.
 */
class GoldenFramesTest {
  private static final HexFormat HEX = HexFormat.of();

  @SuppressWarnings("unchecked")
  private static Map<String, Object> golden() throws Exception {
    Path p = Path.of("..", "..", "testdata", "kafka-wire", "frames.json");
    return (Map<String, Object>) Json.parse(Files.readString(p, StandardCharsets.UTF_8));
  }

  @SuppressWarnings("unchecked")
  private static List<Map<String, Object>> list(Map<String, Object> m, String k) {
    return (List<Map<String, Object>>) m.get(k);
  }

  private static List<Integer> index(Map<String, Object> c) {
    List<Integer> idx = new ArrayList<>();
    for (Object o : (List<?>) c.get("index")) {
      idx.add(((Long) o).intValue());
    }
    return idx;
  }

  @Test
  void everyCaseEncodesAndDecodes() throws Exception {
    List<Map<String, Object>> cases = list(golden(), "cases");
    assertFalse(cases.isEmpty(), "frames.json has no cases");
    for (Map<String, Object> c : cases) {
      String name = (String) c.get("name");
      int id = ((Long) c.get("schema_id")).intValue();
      byte[] payload = HEX.parseHex((String) c.get("payload_hex"));
      byte[] framed = HEX.parseHex((String) c.get("framed_hex"));
      assertArrayEquals(framed, ConfluentFraming.frame(id, index(c), payload), name + ": frame");
      assertEquals(new ConfluentFraming.Frame(id, index(c), payload), ConfluentFraming.parse(framed),
          name + ": parse");
    }
  }

  @Test
  void everyRecordEncodesAndDecodes() throws Exception {
    List<Map<String, Object>> recs = list(golden(), "records");
    assertFalse(recs.isEmpty(), "frames.json has no records");
    for (Map<String, Object> r : recs) {
      String name = (String) r.get("name");
      @SuppressWarnings("unchecked")
      Map<String, Object> e = (Map<String, Object>) r.get("envelope");
      @SuppressWarnings("unchecked")
      Map<String, Object> trace = (Map<String, Object>) e.get("trace");
      Envelope env = Envelope.newBuilder().setMessageId((String) e.get("message_id"))
          .setBizKey((String) e.get("biz_key")).setEventType((String) e.get("event_type"))
          .setSchemaSubject((String) e.get("schema_subject"))
          .setSchemaVersion(((Long) e.get("schema_version")).intValue())
          .setOccurredAt(Long.parseLong((String) e.get("occurred_at")))
          .setRetryCount(((Long) e.get("retry_count")).intValue())
          .setTrace(TraceContext.newBuilder().setTraceparent((String) trace.get("traceparent")))
          .setContentType((String) e.get("content_type"))
          .setPayload(ByteString.copyFrom(Base64.getDecoder().decode((String) e.get("payload"))))
          .setTopic((String) e.get("topic")).build();
      int id = ((Long) r.get("schema_id")).intValue();
      byte[] value = HEX.parseHex((String) r.get("value_hex"));
      byte[] header = HEX.parseHex((String) r.get("header_hex"));
      assertArrayEquals(HEX.parseHex((String) r.get("key_hex")), env.getBizKey().getBytes(StandardCharsets.UTF_8),
          name + ": key");
      assertEquals("order-event-value", Wire.subject(env, env.getTopic()), name + ": subject");
      assertArrayEquals(value, ConfluentFraming.frame(id, index(r), env.getPayload().toByteArray()),
          name + ": value");
      assertArrayEquals(header, Wire.header(env), name + ": header");
      ConfluentFraming.Frame f = ConfluentFraming.parse(value);
      assertEquals(id, f.schemaId(), name + ": id");
      assertEquals(env, Wire.join(Envelope.parseFrom(header), f.payload()), name + ": joined envelope");
    }
  }
}
