package io.msgcontract.conformance;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import com.google.protobuf.Message;
import io.msgcontract.support.BizKeyException;
import io.msgcontract.support.Classification;
import io.msgcontract.support.DecodeException;
import io.msgcontract.support.EventSpec;
import io.msgcontract.support.PayloadHash;
import io.msgcontract.support.RetryPolicy;
import io.msgcontract.support.StateMachine;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Base64;

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
    for (JsonElement c : cases) {
      JsonObject result;
      try {
        result = run(c.getAsJsonObject());
      } catch (RuntimeException e) {
        result = new JsonObject();
        result.addProperty("error", "EXCEPTION: " + e);
      }
      results.add(result);
    }
    PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
    out.println(results);
  }

  private static JsonObject run(JsonObject c) {
    String kind = c.get("kind").getAsString();
    JsonObject r = new JsonObject();
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
      default -> r.addProperty("error", "UNKNOWN_KIND");
    }
    return r;
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
