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
 * ({@code runtime-go/tracing}) and the Python runtime ({@code msgcontract_runtime.tracing}) share,
 * named and attributed after the OpenTelemetry messaging semantic conventions: the envelope's
 * {@code trace} field carries W3C {@code traceparent}/{@code tracestate}; a producer span {@code
 * send <topic>} (kind PRODUCER) is injected into it; a consumer span {@code process <topic>} (kind
 * CONSUMER) continues it, linked to it, with the messaging attributes plus {@code msgcontract.*},
 * and ends at the outcome. testdata/otel/messaging-spans.tsv lists every span and attribute; the
 * three runtimes test their spans against it.
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
  /** messaging.operation.name: send or process. */
  public static final AttributeKey<String> OPERATION_NAME = AttributeKey.stringKey("messaging.operation.name");
  /** messaging.consumer.group.name. */
  public static final AttributeKey<String> CONSUMER_GROUP = AttributeKey.stringKey("messaging.consumer.group.name");
  /** messaging.destination.partition.id: a Kafka record's partition. */
  public static final AttributeKey<String> PARTITION = AttributeKey.stringKey("messaging.destination.partition.id");
  /** messaging.kafka.offset: a Kafka record's offset. */
  public static final AttributeKey<Long> KAFKA_OFFSET = AttributeKey.longKey("messaging.kafka.offset");
  /** server.address: the broker, when the tracing is given it ({@link #withServer}). */
  public static final AttributeKey<String> SERVER_ADDRESS = AttributeKey.stringKey("server.address");
  /** server.port: the broker's port. */
  public static final AttributeKey<Long> SERVER_PORT = AttributeKey.longKey("server.port");
  /** error.type: the failure's contract error code in decimal, or {@value #ERROR_OTHER}. */
  public static final AttributeKey<String> ERROR_TYPE = AttributeKey.stringKey("error.type");
  /** error.type of a failure without an error code (a database or transport failure). */
  public static final String ERROR_OTHER = "_OTHER";
  /** messaging.system of Apache Kafka, whose process spans carry the record's partition and offset. */
  public static final String SYSTEM_KAFKA = "kafka";
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
  private final String serverAddress;
  private final int serverPort;

  /**
   * Starts spans on otel's tracer provider.
   *
   * @param otel the OpenTelemetry instance (GlobalOpenTelemetry.get(), or the SDK's)
   * @param system messaging.system: the transport ("kafka", "nats", "rabbitmq", or
   *     "msgcontract_sqlite" for the embedded queue, which the conventions do not name)
   * @param group messaging.consumer.group.name of the consumer spans, "" for none
   */
  public Tracing(OpenTelemetry otel, String system, String group) {
    this(otel.getTracer(SCOPE), system, group, "", 0);
  }

  private Tracing(Tracer tracer, String system, String group, String serverAddress, int serverPort) {
    this.tracer = tracer;
    this.system = system;
    this.group = group;
    this.serverAddress = serverAddress;
    this.serverPort = serverPort;
  }

  /**
   * Returns a tracing like this one whose spans carry server.address and server.port: the broker
   * the transport talks to (its first bootstrap server for Kafka). An empty address sets neither; a
   * port of 0 sets the address only.
   *
   * @param address the broker's host name or address
   * @param port the broker's port, 0 for none
   * @return the tracing
   */
  public Tracing withServer(String address, int port) {
    return new Tracing(tracer, system, group, address, port);
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

  /** A span "{operation} {topic}" with the attributes of every span of one envelope. */
  private SpanBuilder common(String operation, SpanKind kind, String topic, Envelope env) {
    SpanBuilder b = tracer.spanBuilder(operation + " " + topic)
        .setSpanKind(kind)
        .setAttribute(SYSTEM, system)
        .setAttribute(OPERATION_NAME, operation)
        .setAttribute(OPERATION_TYPE, operation)
        .setAttribute(DESTINATION, topic)
        .setAttribute(MESSAGE_ID, env.getMessageId())
        .setAttribute(BIZ_KEY, env.getBizKey())
        .setAttribute(EVENT_TYPE, env.getEventType())
        .setAttribute(RETRY_COUNT, (long) env.getRetryCount());
    if (!serverAddress.isEmpty()) {
      b.setAttribute(SERVER_ADDRESS, serverAddress);
      if (serverPort > 0) {
        b.setAttribute(SERVER_PORT, (long) serverPort);
      }
    }
    return b;
  }

  /**
   * Starts the producer span {@code send <topic>} and injects it into b (replacing the trace it
   * carried, which becomes its parent when there is no current span: the relay publishing what a
   * producer wrote). The caller ends the span, after {@link #fail} when the send failed.
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
    Span span = common("send", SpanKind.PRODUCER, topic, b.build()).setParent(parent).startSpan();
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
    return startProcess(topic, env, null);
  }

  /**
   * Like {@link #startProcess(String, Envelope)} for a delivery the transport names: with
   * messaging.system {@value #SYSTEM_KAFKA} and a Kafka delivery id ({@code
   * <topic>/<partition>/<offset>}, what {@code KafkaConsumerLoop} passes to {@code
   * Consumer.process}) the span carries the record's partition and offset.
   *
   * @param topic the topic delivered from
   * @param env the envelope
   * @param deliveryId the transport's id of the delivery, or null
   * @return the span
   */
  public Span startProcess(String topic, Envelope env, String deliveryId) {
    Context parent = extract(Context.root(), env);
    SpanBuilder b = common("process", SpanKind.CONSUMER, topic, env).setParent(parent);
    if (!group.isEmpty()) {
      b.setAttribute(CONSUMER_GROUP, group);
    }
    if (SYSTEM_KAFKA.equals(system) && deliveryId != null) {
      kafkaLocation(b, deliveryId);
    }
    SpanContext sc = Span.fromContext(parent).getSpanContext();
    if (sc.isValid() && sc.isRemote()) {
      b.addLink(sc);
    }
    return b.startSpan();
  }

  /** Sets partition and offset from a Kafka delivery id, {@code <topic>/<partition>/<offset>}. */
  private static void kafkaLocation(SpanBuilder b, String deliveryId) {
    int o = deliveryId.lastIndexOf('/');
    int p = deliveryId.lastIndexOf('/', o - 1);
    if (p < 0) {
      return;
    }
    try {
      long offset = Long.parseLong(deliveryId.substring(o + 1));
      int partition = Integer.parseInt(deliveryId.substring(p + 1, o));
      b.setAttribute(PARTITION, Integer.toString(partition)).setAttribute(KAFKA_OFFSET, offset);
    } catch (NumberFormatException e) {
      // not a Kafka delivery id: no location
    }
  }

  /**
   * The error.type of a failure with an error code: the code in decimal (a contract code, or the
   * runtime's negative codes for an undecodable envelope, a missing handler), {@value
   * #ERROR_OTHER} for 0.
   *
   * @param code the failure's code
   * @return the error.type value
   */
  public static String errorType(int code) {
    return code == 0 ? ERROR_OTHER : Integer.toString(code);
  }

  /**
   * Marks span failed with error: the exception recorded, status ERROR, error.type {@value
   * #ERROR_OTHER}. What a relay calls when a send fails, before it ends the span.
   *
   * @param span the span
   * @param error the failure
   */
  public static void fail(Span span, Throwable error) {
    span.setAttribute(ERROR_TYPE, ERROR_OTHER);
    span.recordException(error);
    span.setStatus(StatusCode.ERROR, String.valueOf(error.getMessage()));
  }

  /**
   * Records outcome on span and ends it; error, when not null, marks it failed (error.type
   * {@value #ERROR_OTHER}).
   *
   * @param span the span
   * @param outcome the msgcontract.outcome value
   * @param error the failure, or null
   */
  public static void end(Span span, String outcome, Throwable error) {
    span.setAttribute(OUTCOME, outcome);
    if (error != null) {
      fail(span, error);
    }
    span.end();
  }

  /** Ends a span whose delivery failed with an error code (a retry, a dead letter): status ERROR. */
  private static void endFailed(Span span, String outcome, int code, Throwable error, String message) {
    span.setAttribute(OUTCOME, outcome);
    span.setAttribute(ERROR_TYPE, errorType(code));
    if (error != null) {
      span.recordException(error);
    } else {
      // No exception (a payload that did not decode, a timeout): the message, as Go records it.
      span.addEvent("exception", Attributes.of(AttributeKey.stringKey("exception.message"), message));
    }
    span.setStatus(StatusCode.ERROR, message);
    span.end();
  }

  @Override
  public DeliveryTracer.Traced start(String topic, String handler, Envelope envelope) {
    return start(topic, handler, envelope, null);
  }

  @Override
  public DeliveryTracer.Traced start(String topic, String handler, Envelope envelope, String deliveryId) {
    Span span = startProcess(topic, envelope, deliveryId);
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
          var last = r.nextEnvelope().getLastError();
          endFailed(span, "retry_scheduled", last.getCode(), error, last.getMessage());
        } else if (d instanceof Decision.DeadLetter dl) {
          span.setAttribute(DEAD_LETTER_REASON, dl.reason());
          endFailed(span, "dead_lettered", dl.code(), error, dl.error());
        }
      }
    };
  }
}
