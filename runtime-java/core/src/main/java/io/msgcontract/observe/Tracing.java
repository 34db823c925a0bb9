package io.msgcontract.observe;

import io.msgcontract.support.Decision;
import io.msgcontract.support.DeliveryTracer;
import io.msgcontract.v1.Envelope;
import io.msgcontract.v1.TraceContext;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanBuilder;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.propagation.TextMapGetter;

/**
 * OpenTelemetry spans in the vocabulary of docs/DESIGN.md ("Observability") that the Go runtime
 * ({@code runtime-go/tracing}) and the Python runtime ({@code msgcontract_runtime.tracing}) share:
 * the envelope's {@code trace} field carries W3C {@code traceparent}/{@code tracestate}; a
 * producer span {@code publish <topic>} (kind PRODUCER) is injected into it; a consumer span
 * {@code process <topic>} (kind CONSUMER) continues it, linked to it, with the messaging
 * semantic-convention attributes plus {@code msgcontract.*}, and ends at the outcome.
 *
 * <p>Needs only {@code io.opentelemetry:opentelemetry-api}: without an SDK installed every span
 * is a no-op. A consumer without {@code withTracer(...)} makes no tracing call at all.
 */
public final class Tracing implements DeliveryTracer {
  /** The instrumentation scope of msgcontract's spans, as in Go. */
  public static final String SCOPE = "io.msgcontract.runtime";

  /** messaging.system. */
  public static final AttributeKey<String> SYSTEM = AttributeKey.stringKey("messaging.system");
  /** messaging.destination.name. */
  public static final AttributeKey<String> DESTINATION = AttributeKey.stringKey("messaging.destination.name");
  /** messaging.message.id. */
  public static final AttributeKey<String> MESSAGE_ID = AttributeKey.stringKey("messaging.message.id");
  /** messaging.operation.type: send or process. */
  public static final AttributeKey<String> OPERATION_TYPE = AttributeKey.stringKey("messaging.operation.type");
  /** messaging.operation.name: publish or process. */
  public static final AttributeKey<String> OPERATION_NAME = AttributeKey.stringKey("messaging.operation.name");
  /** messaging.consumer.group.name. */
  public static final AttributeKey<String> CONSUMER_GROUP = AttributeKey.stringKey("messaging.consumer.group.name");
  /** msgcontract.biz_key. */
  public static final AttributeKey<String> BIZ_KEY = AttributeKey.stringKey("msgcontract.biz_key");
  /** msgcontract.event_type. */
  public static final AttributeKey<String> EVENT_TYPE = AttributeKey.stringKey("msgcontract.event_type");
  /** msgcontract.retry_count. */
  public static final AttributeKey<Long> RETRY_COUNT = AttributeKey.longKey("msgcontract.retry_count");
  /** msgcontract.outcome: handled, deduplicated, retry_scheduled, dead_lettered, deferred, handed_back. */
  public static final AttributeKey<String> OUTCOME = AttributeKey.stringKey("msgcontract.outcome");
  /** msgcontract.retry_delay_seconds, on a retry. */
  public static final AttributeKey<Double> RETRY_DELAY = AttributeKey.doubleKey("msgcontract.retry_delay_seconds");
  /** msgcontract.dead_letter_reason, on a dead letter. */
  public static final AttributeKey<String> DEAD_LETTER_REASON = AttributeKey.stringKey("msgcontract.dead_letter_reason");

  private static final W3CTraceContextPropagator PROPAGATOR = W3CTraceContextPropagator.getInstance();

  private static final TextMapGetter<TraceContext> GETTER = new TextMapGetter<>() {
    @Override
    public String get(TraceContext c, String key) {
      if (c == null) {
        return null;
      }
      return switch (key) {
        case "traceparent" -> c.getTraceparent().isEmpty() ? null : c.getTraceparent();
        case "tracestate" -> c.getTracestate().isEmpty() ? null : c.getTracestate();
        default -> null;
      };
    }
  };

  private final Tracer tracer;
  private final String system;
  private final String group;

  /**
   * Starts spans on otel's tracer provider.
   *
   * @param otel the OpenTelemetry instance (GlobalOpenTelemetry.get(), or the SDK's)
   * @param system messaging.system: the transport ("kafka", "nats", "msgcontract_sqlite")
   * @param group messaging.consumer.group.name of the consumer spans, "" for none
   */
  public Tracing(OpenTelemetry otel, String system, String group) {
    this.tracer = otel.getTracer(SCOPE);
    this.system = system;
    this.group = group;
  }

  /**
   * Writes the current span's context (Context.current()) into b's trace field, unless b already
   * carries one or there is no valid current span: what an outbox writer calls, so consumers
   * continue the producing trace.
   *
   * @param b the envelope being built
   * @return b
   */
  public static Envelope.Builder inject(Envelope.Builder b) {
    return inject(Context.current(), b);
  }

  /**
   * Returns env with the current span's context in its trace field, or env itself when it already
   * carries one or there is no valid current span (then nothing is allocated).
   *
   * @param env the envelope
   * @return env, or a copy carrying the current span
   */
  public static Envelope inject(Envelope env) {
    if (!env.getTrace().getTraceparent().isEmpty() || !Span.current().getSpanContext().isValid()) {
      return env;
    }
    return inject(Context.current(), env.toBuilder()).build();
  }

  /**
   * Like {@link #inject(Envelope.Builder)} with an explicit context.
   *
   * @param ctx the context whose span is injected
   * @param b the envelope being built
   * @return b
   */
  public static Envelope.Builder inject(Context ctx, Envelope.Builder b) {
    if (!b.getTrace().getTraceparent().isEmpty() || !Span.fromContext(ctx).getSpanContext().isValid()) {
      return b;
    }
    TraceContext.Builder tc = TraceContext.newBuilder();
    PROPAGATOR.inject(ctx, tc, (carrier, key, value) -> {
      if (carrier == null) {
        return;
      }
      switch (key) {
        case "traceparent" -> carrier.setTraceparent(value);
        case "tracestate" -> carrier.setTracestate(value);
        default -> { }
      }
    });
    return b.setTrace(tc);
  }

  /**
   * Returns ctx with env's trace context as its remote parent; ctx unchanged when env has none.
   *
   * @param ctx the context to extend
   * @param env the envelope
   * @return the context
   */
  public static Context extract(Context ctx, Envelope env) {
    if (env.getTrace().getTraceparent().isEmpty()) {
      return ctx;
    }
    return PROPAGATOR.extract(ctx, env.getTrace(), GETTER);
  }

  private SpanBuilder common(String name, SpanKind kind, String topic, Envelope env) {
    return tracer.spanBuilder(name)
        .setSpanKind(kind)
        .setAttribute(SYSTEM, system)
        .setAttribute(DESTINATION, topic)
        .setAttribute(MESSAGE_ID, env.getMessageId())
        .setAttribute(BIZ_KEY, env.getBizKey())
        .setAttribute(EVENT_TYPE, env.getEventType())
        .setAttribute(RETRY_COUNT, (long) env.getRetryCount());
  }

  /**
   * Starts the producer span {@code publish <topic>} and injects it into b (replacing the trace
   * it carried, which becomes its parent when there is no current span: the relay publishing
   * what a producer wrote). The caller ends the span.
   *
   * @param topic the destination
   * @param b the envelope being published
   * @return the span
   */
  public Span startPublish(String topic, Envelope.Builder b) {
    Context parent = Context.current();
    if (!Span.fromContext(parent).getSpanContext().isValid()) {
      parent = extract(parent, b.build());
    }
    Span span = common("publish " + topic, SpanKind.PRODUCER, topic, b.build())
        .setParent(parent)
        .setAttribute(OPERATION_TYPE, "send")
        .setAttribute(OPERATION_NAME, "publish")
        .startSpan();
    b.clearTrace();
    inject(parent.with(span), b);
    return span;
  }

  /**
   * Starts the consumer span {@code process <topic>} of env: a child of the envelope's trace
   * context (which every retry carries unchanged) and linked to it. End it with {@link
   * #end(Span, String, Throwable)} or through {@link DeliveryTracer.Traced#end}.
   *
   * @param topic the topic delivered from
   * @param env the envelope
   * @return the span
   */
  public Span startProcess(String topic, Envelope env) {
    Context parent = extract(Context.root(), env);
    SpanBuilder b = common("process " + topic, SpanKind.CONSUMER, topic, env)
        .setParent(parent)
        .setAttribute(OPERATION_TYPE, "process")
        .setAttribute(OPERATION_NAME, "process");
    if (!group.isEmpty()) {
      b.setAttribute(CONSUMER_GROUP, group);
    }
    SpanContext sc = Span.fromContext(parent).getSpanContext();
    if (sc.isValid() && sc.isRemote()) {
      b.addLink(sc);
    }
    return b.startSpan();
  }

  /**
   * Records outcome on span and ends it; error, when not null, marks it failed.
   *
   * @param span the span
   * @param outcome the msgcontract.outcome value
   * @param error the failure, or null
   */
  public static void end(Span span, String outcome, Throwable error) {
    span.setAttribute(OUTCOME, outcome);
    if (error != null) {
      span.recordException(error);
      span.setStatus(StatusCode.ERROR, String.valueOf(error.getMessage()));
    }
    span.end();
  }

  @Override
  public DeliveryTracer.Traced start(String topic, String handler, Envelope envelope) {
    Span span = startProcess(topic, envelope);
    return new DeliveryTracer.Traced() {
      @Override
      public DeliveryTracer.Scope activate() {
        io.opentelemetry.context.Scope s = span.makeCurrent();
        return s::close;
      }

      @Override
      public void end(Decision d, Throwable error) {
        if (d == null) {
          Tracing.end(span, "handed_back", error);
        } else if (d instanceof Decision.Ack a) {
          Tracing.end(span, a.deduplicated() ? "deduplicated" : "handled", null);
        } else if (d instanceof Decision.Defer) {
          Tracing.end(span, "deferred", null);
        } else if (d instanceof Decision.Retry r) {
          span.setAttribute(RETRY_DELAY, r.delayMs() / 1000.0);
          Tracing.end(span, "retry_scheduled", error);
        } else if (d instanceof Decision.DeadLetter dl) {
          span.setAttribute(DEAD_LETTER_REASON, dl.reason());
          span.setAttribute(OUTCOME, "dead_lettered");
          if (error != null) {
            span.recordException(error);
          } else {
            // A payload that did not decode: the record's error, as Go records it.
            span.addEvent("exception", Attributes.of(AttributeKey.stringKey("exception.message"), dl.error()));
          }
          span.setStatus(StatusCode.ERROR, dl.error());
          span.end();
        }
      }
    };
  }
}
