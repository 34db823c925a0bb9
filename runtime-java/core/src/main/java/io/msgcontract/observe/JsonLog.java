package io.msgcontract.observe;

import io.msgcontract.support.Decision;
import io.msgcontract.support.JsonStrings;
import io.msgcontract.support.Observer;
import io.msgcontract.v1.Envelope;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Consumer;

/**
 * One JSON log line per outcome, with the field names of docs/DESIGN.md ("Observability") that the
 * Go and Python runtimes use: {@code biz_key}, {@code message_id}, {@code event_type},
 * {@code trace_id}, {@code span_id}, {@code retry_count}, {@code outcome}, plus {@code handler},
 * {@code topic} and on failures {@code reason}, {@code code}, {@code delay_seconds},
 * {@code error}. No dependency: the line goes to a {@code Consumer<String>} (System.out::println,
 * a logging framework's raw appender, ...).
 */
public final class JsonLog implements Observer {
  private final Consumer<String> sink;

  /**
   * Writes each line to sink.
   *
   * @param sink receives one JSON object per outcome, without a newline
   */
  public JsonLog(Consumer<String> sink) {
    this.sink = sink;
  }

  @Override
  public void observe(Outcome o) {
    String label = o.label();
    if (label == null) {
      return;
    }
    sink.accept(line(o, label, Instant.now()));
  }

  static String line(Outcome o, String label, Instant now) {
    Map<String, Object> f = new LinkedHashMap<>();
    boolean failed = o.decision() instanceof Decision.Retry || o.decision() instanceof Decision.DeadLetter;
    f.put("time", now.toString());
    f.put("level", failed ? "WARN" : "INFO");
    f.put("msg", "msgcontract: " + label.replace('_', ' '));
    f.put("handler", o.handler());
    f.put("topic", o.topic());
    Envelope env = o.envelope();
    if (env != null) {
      f.put("message_id", env.getMessageId());
      f.put("biz_key", env.getBizKey());
      f.put("retry_count", env.getRetryCount());
      f.put("event_type", env.getEventType());
      String tp = env.getTrace().getTraceparent();
      if (tp.length() >= 55 && tp.charAt(2) == '-' && tp.charAt(35) == '-' && tp.charAt(52) == '-') {
        f.put("trace_id", tp.substring(3, 35));
        f.put("span_id", tp.substring(36, 52));
      }
    }
    f.put("outcome", label);
    if (o.decision() instanceof Decision.Retry r) {
      f.put("code", r.nextEnvelope().getLastError().getCode());
      f.put("delay_seconds", r.delayMs() / 1000.0);
      f.put("error", r.nextEnvelope().getLastError().getMessage());
    } else if (o.decision() instanceof Decision.DeadLetter d) {
      f.put("reason", d.reason());
      f.put("code", d.code());
      f.put("error", d.error());
    }
    StringBuilder b = new StringBuilder("{");
    for (Map.Entry<String, Object> e : f.entrySet()) {
      if (b.length() > 1) {
        b.append(',');
      }
      JsonStrings.quote(b, e.getKey());
      b.append(':');
      if (e.getValue() instanceof Number) {
        b.append(e.getValue());
      } else {
        JsonStrings.quote(b, String.valueOf(e.getValue()));
      }
    }
    return b.append('}').toString();
  }
}
