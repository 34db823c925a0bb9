package io.msgcontract.conformance;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import com.google.protobuf.Message;
import io.msgcontract.support.BizKeyException;
import io.msgcontract.support.ChainPos;
import io.msgcontract.support.Classification;
import io.msgcontract.support.Consumer;
import io.msgcontract.support.Ddl;
import io.msgcontract.support.Decision;
import io.msgcontract.support.DecodeException;
import io.msgcontract.support.DedupStore;
import io.msgcontract.support.Envelopes;
import io.msgcontract.support.EventSpec;
import io.msgcontract.support.PayloadHash;
import io.msgcontract.support.RetryChain;
import io.msgcontract.support.RetryPolicy;
import io.msgcontract.support.StateMachine;
import io.msgcontract.support.TxCheck;
import io.msgcontract.v1.Envelope;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The Java conformance executor: reads a JSON array of cases on standard
 * input, runs each through the generated contract classes listed in
 * Registry, and prints a JSON array of results, one per case, on standard
 * output.
 */
public final class Executor {
  private Executor() {}

  /** Runs the cases on standard input. */
  public static void main(String[] args) throws Exception {
    JsonArray cases = JsonParser.parseReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).getAsJsonArray();
    JsonArray results = new JsonArray();
    int n = 0;
    for (JsonElement c : cases) {
      JsonObject result;
      n++;
      try {
        result = run(c.getAsJsonObject(), n);
      } catch (RuntimeException | SQLException e) {
        result = new JsonObject();
        result.addProperty("error", "EXCEPTION: " + e);
      }
      results.add(result);
    }
    PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
    out.println(results);
  }

  private static JsonObject run(JsonObject c, int index) throws SQLException {
    String kind = c.get("kind").getAsString();
    JsonObject r = new JsonObject();
    if (kind.equals("txcheck")) {
      txCheck(c, r);
      return r;
    }
    if (kind.equals("transition")) {
      StateMachine sm = Registry.STATE_MACHINES.get(c.get("enum").getAsString());
      if (sm == null) {
        r.addProperty("error", "UNKNOWN_ENUM");
        return r;
      }
      r.addProperty("result", sm.canTransit(str(c, "from"), str(c, "to")).name());
      return r;
    }
    EventSpec<?> spec = Registry.EVENTS.get(c.get("message").getAsString());
    if (spec == null) {
      r.addProperty("error", "UNKNOWN_MESSAGE");
      return r;
    }
    switch (kind) {
      case "biz_key" -> bizKey(spec, c, r);
      case "payload_hash" -> payloadHash(spec, c, r);
      case "classify" -> {
        Classification cl = c.has("code") ? spec.rules().classify(c.get("code").getAsInt()) : spec.rules().noCode();
        r.addProperty("retryable", cl.retryable());
        r.addProperty("range", cl.range());
      }
      case "backoff" -> {
        RetryPolicy p = spec.retry();
        int n = c.has("retry") ? c.get("retry").getAsInt() : 0;
        double u = c.has("u") ? c.get("u").getAsDouble() : 0;
        boolean dead = p.deadLetter(n);
        r.addProperty("dead_letter", dead);
        if (!dead) {
          r.addProperty("delay_ms", p.delayMs(n, u));
        }
      }
      case "decision" -> decision(spec, c, index, r);
      case "handler_calls" -> handlerCalls(spec, c, index, r);
      default -> r.addProperty("error", "UNKNOWN_KIND");
    }
    return r;
  }

  /** The exception a failing handler of case c throws: c's code, or none. */
  private static Exception failure(EventSpec<?> spec, JsonObject c) {
    return c.has("code") ? spec.rules().error(c.get("code").getAsInt(), "conformance") : new IllegalStateException("conformance");
  }

  /** An envelope of spec's event with an empty payload under bizKey. */
  private static Envelope.Builder bare(EventSpec<?> spec, String bizKey) {
    return Envelope.newBuilder()
        .setMessageId(Envelopes.newMessageId())
        .setBizKey(bizKey)
        .setEventType(spec.eventType())
        .setTopic(spec.topic())
        .setContentType(Envelopes.CONTENT_TYPE_PROTO)
        .setPayload(spec.defaultInstance().toByteString());
  }

  private static Connection memory() throws SQLException {
    Connection conn = DriverManager.getConnection("jdbc:sqlite::memory:");
    DedupStore.migrate(conn);
    return conn;
  }

  /** Puts a decision as the vectors spell it into r. */
  private static void decisionResult(Decision d, JsonObject r) {
    if (d instanceof Decision.Ack a) {
      r.addProperty("decision", "ack");
      r.addProperty("deduplicated", a.deduplicated());
    } else if (d instanceof Decision.Retry rt) {
      r.addProperty("decision", "retry");
      r.addProperty("retry_count", rt.nextEnvelope().getRetryCount());
      r.addProperty("delay_ms", rt.delayMs());
    } else if (d instanceof Decision.DeadLetter dl) {
      r.addProperty("decision", "dead_letter");
      r.addProperty("reason", dl.reason());
      r.addProperty("code", dl.code());
      r.addProperty("attempts", dl.attempts());
    } else {
      r.addProperty("decision", "defer");
    }
  }

  /**
   * Runs c's outcome through Consumer.process, whose decision step decides, on an in-memory
   * SQLite database: a duplicate or a conflict meets a committed claim of the key (the same
   * payload hash, another one), an error is the handler throwing c's code, and the message's
   * retry chain row is advanced to before the delivery arrives with its delivery id.
   */
  private static <M extends Message> void decision(EventSpec<M> spec, JsonObject c, int n, JsonObject r)
      throws SQLException {
    try (Connection conn = memory()) {
      String handlerName = "case-" + n;
      Envelope env = bare(spec, "decision:" + n)
          .setRetryCount(c.has("retry_count") ? c.get("retry_count").getAsInt() : 0)
          .setReplayCount(c.has("replay_count") ? c.get("replay_count").getAsInt() : 0)
          .build();
      String outcome = c.get("outcome").getAsString();
      if (outcome.equals("duplicate") || outcome.equals("conflict")) {
        String hash = outcome.equals("duplicate") ? PayloadHash.of(spec.defaultInstance()) : "0".repeat(64);
        conn.setAutoCommit(false);
        DedupStore.claim(conn, env.getBizKey(), handlerName, "prior", hash, 1);
        conn.commit();
        conn.setAutoCommit(true);
      }
      if (c.has("chain")) {
        JsonObject ch = c.getAsJsonObject("chain");
        ChainPos went = new ChainPos(ch.get("replay_count").getAsInt(), ch.get("attempt").getAsInt(),
            ch.get("delivery_id").getAsString());
        if (!RetryChain.advance(conn, handlerName, env.getMessageId(), went, 1).ok()) {
          throw new IllegalStateException("the chain row was not written");
        }
      }
      Exception err = outcome.equals("error") ? failure(spec, c) : null;
      double u = c.has("u") ? c.get("u").getAsDouble() : 0;
      Consumer<M> consumer = new Consumer<>(spec, handlerName, (tx, m, e) -> {
        if (err != null) {
          throw err;
        }
      }, () -> 1_000_000L, () -> u);
      conn.setAutoCommit(false);
      String deliveryId = c.has("delivery_id") ? c.get("delivery_id").getAsString() : null;
      decisionResult(consumer.process(conn, Envelopes.encode(env), deliveryId), r);
    }
  }

  /**
   * Runs c's batch through Consumer.processShared, one shared transaction per round, as a
   * transport hands the consumer a fetch; a round's retries are the next round's batch. Counts
   * each member's handler runs.
   */
  private static <M extends Message> void handlerCalls(EventSpec<M> spec, JsonObject c, int n, JsonObject r)
      throws SQLException {
    try (Connection conn = memory()) {
      try (Statement st = conn.createStatement()) {
        st.execute("CREATE TABLE effects (biz_key TEXT NOT NULL)");
      }
      JsonArray batch = c.getAsJsonArray("batch");
      int[] calls = new int[batch.size()];
      Map<String, Integer> member = new HashMap<>();
      Exception err = failure(spec, c);
      long[] now = {1_000_000L};
      Consumer<M> consumer = new Consumer<>(spec, "calls-" + n, (tx, m, e) -> {
        int i = member.get(e.getBizKey());
        calls[i]++;
        try (var st = tx.prepareStatement("INSERT INTO effects (biz_key) VALUES (?)")) {
          st.setString(1, e.getBizKey());
          st.executeUpdate();
        }
        if (batch.get(i).getAsString().equals("fail") && e.getRetryCount() == 0) {
          throw err;
        }
      }, () -> now[0], () -> 0.0);
      List<byte[]> bodies = new ArrayList<>();
      for (int i = 0; i < batch.size(); i++) {
        Envelope env = bare(spec, "calls:" + n + ":" + i).build();
        member.put(env.getBizKey(), i);
        bodies.add(Envelopes.encode(env));
      }
      conn.setAutoCommit(false);
      for (int round = 0; round < 10; round++) {
        if (bodies.isEmpty()) {
          JsonArray out = new JsonArray();
          for (int k : calls) {
            out.add(k);
          }
          r.add("handler_calls", out);
          return;
        }
        List<Consumer.Pending> pending = new ArrayList<>();
        for (byte[] b : bodies) {
          pending.add(consumer.processShared(conn, b));
        }
        conn.commit();
        bodies = new ArrayList<>();
        for (Consumer.Pending p : pending) {
          Decision d = p.committed();
          if (d instanceof Decision.Retry rt) {
            bodies.add(Envelopes.encode(rt.nextEnvelope()));
            now[0] = Math.max(now[0], rt.nextEnvelope().getNotBefore());
          } else if (d instanceof Decision.Defer) {
            r.addProperty("error", "DEFERRED: " + d);
            return;
          }
        }
      }
      r.addProperty("error", "RETRIES_NEVER_END");
    }
  }

  /**
   * Answers c's check-back with TxCheck.check on an in-memory SQLite database that TxCheck.migrate
   * created, where c's rows were recorded (TxCheck.record) and committed first, and computes
   * TxCheck.deadline.
   */
  private static void txCheck(JsonObject c, JsonObject r) throws SQLException {
    try (Connection conn = DriverManager.getConnection("jdbc:sqlite::memory:")) {
      TxCheck.migrate(conn, Ddl.SQLITE);
      String messageId = str(c, "message_id");
      long stored = c.get("stored_ms").getAsLong();
      long now = c.get("now_ms").getAsLong();
      long unresolved = c.get("unresolved_ms").getAsLong();
      List<String> ids = new ArrayList<>();
      if (c.has("other_recorded")) {
        for (JsonElement id : c.getAsJsonArray("other_recorded")) {
          ids.add(id.getAsString());
        }
      }
      if (c.has("recorded") && c.get("recorded").getAsBoolean()) {
        ids.add(messageId);
      }
      conn.setAutoCommit(false);
      for (String id : ids) {
        TxCheck.record(conn, id, "conformance", stored);
        conn.commit();
      }
      conn.setAutoCommit(true);
      r.addProperty("answer", TxCheck.check(conn, messageId, stored, now, unresolved).name());
      r.addProperty("deadline_ms", TxCheck.deadline(stored, unresolved));
    }
  }

  private static <M extends Message> void bizKey(EventSpec<M> spec, JsonObject c, JsonObject r) {
    String input = c.has("input") ? c.get("input").toString() : "{}";
    try {
      M m = spec.parseJson(input);
      r.addProperty("biz_key", spec.bizKey(m));
    } catch (BizKeyException e) {
      r.addProperty("error", e.code().name());
    } catch (DecodeException e) {
      r.addProperty("error", "DECODE: " + e.getMessage());
    }
  }

  private static <M extends Message> void payloadHash(EventSpec<M> spec, JsonObject c, JsonObject r) {
    try {
      M m = c.has("input_binary")
          ? spec.parseBinary(Base64.getDecoder().decode(c.get("input_binary").getAsString()))
          : spec.parseJson(c.has("input") ? c.get("input").toString() : "{}");
      r.addProperty("payload_hash", PayloadHash.of(m));
    } catch (DecodeException e) {
      r.addProperty("error", "INVALID_INPUT");
    }
  }

  private static String str(JsonObject c, String name) {
    return c.has(name) ? c.get(name).getAsString() : "";
  }
}
