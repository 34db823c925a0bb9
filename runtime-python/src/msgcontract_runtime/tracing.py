"""OpenTelemetry spans in the vocabulary the Go and Java runtimes share (docs/DESIGN.md, "Observability").

Span names and attributes follow the OpenTelemetry messaging semantic
conventions; testdata/otel/messaging-spans.tsv lists every span and
attribute, and the three runtimes test their spans against it.
The envelope's ``trace`` field carries W3C ``traceparent``/``tracestate``.
``inject`` writes the current span into an envelope (an outbox writer calls
it, ``outbox.write(..., inject_trace=True)`` does); ``Tracing.publish`` is a
relay's producer span ``send <topic>``; ``Tracing`` passed as
``Consumer(tracer=...)`` or ``AsyncConsumer(tracer=...)`` starts ``process
<topic>`` (kind CONSUMER) per delivery, a child of the envelope's context and
linked to it, current while the claim and the handler run, ended at the
outcome with the messaging semantic-convention attributes plus
``msgcontract.*``. A retry keeps the envelope's ``traceparent``, so every
attempt is a child of the same send span.

Needs ``opentelemetry-api`` (the extra ``msgcontract-runtime[otel]``);
without an SDK every span is a no-op. A consumer without a tracer makes no
tracing call: the rest of the runtime never imports this module.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from opentelemetry import context as otel_context, trace
from opentelemetry.trace import Link, SpanKind, Status, StatusCode
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from msgcontract.v1 import envelope_pb2 as _envelope_pb2
from msgcontract_runtime.consumer import Ack, DeadLetter, Decision, Defer, Retry

SCOPE = "msgcontract_runtime"
"""The instrumentation scope of msgcontract's spans."""

SYSTEM = "messaging.system"
DESTINATION = "messaging.destination.name"
MESSAGE_ID = "messaging.message.id"
OPERATION_TYPE = "messaging.operation.type"
OPERATION_NAME = "messaging.operation.name"
CONSUMER_GROUP = "messaging.consumer.group.name"
PARTITION = "messaging.destination.partition.id"
KAFKA_OFFSET = "messaging.kafka.offset"
SERVER_ADDRESS = "server.address"
SERVER_PORT = "server.port"
ERROR_TYPE = "error.type"
ERROR_OTHER = "_OTHER"
"""error.type of a failure without an error code (a database or transport failure)."""
SYSTEM_KAFKA = "kafka"
"""messaging.system of Apache Kafka, whose process spans carry the record's partition and offset."""
BIZ_KEY = "msgcontract.biz_key"
EVENT_TYPE = "msgcontract.event_type"
RETRY_COUNT = "msgcontract.retry_count"
OUTCOME = "msgcontract.outcome"
RETRY_DELAY = "msgcontract.retry_delay_seconds"
DEAD_LETTER_REASON = "msgcontract.dead_letter_reason"

_propagator = TraceContextTextMapPropagator()


def inject(env: _envelope_pb2.Envelope, ctx: otel_context.Context | None = None) -> None:
    """Writes ctx's (default: the current) span into env's trace field, unless env has one or there is no valid span."""
    if env.trace.traceparent or not trace.get_current_span(ctx).get_span_context().is_valid:
        return
    carrier: dict[str, str] = {}
    _propagator.inject(carrier, context=ctx)
    env.trace.traceparent = carrier.get("traceparent", "")
    env.trace.tracestate = carrier.get("tracestate", "")


def extract(env: _envelope_pb2.Envelope, ctx: otel_context.Context | None = None) -> otel_context.Context:
    """ctx (default: an empty context) with env's trace context as its remote parent."""
    base = ctx if ctx is not None else otel_context.Context()
    if not env.trace.traceparent:
        return base
    carrier = {"traceparent": env.trace.traceparent}
    if env.trace.tracestate:
        carrier["tracestate"] = env.trace.tracestate
    return _propagator.extract(carrier, context=base)


def error_type(code: int) -> str:
    """error.type of a failure with code: the code in decimal (a contract or runtime code), _OTHER for 0."""
    return ERROR_OTHER if code == 0 else str(code)


def _kafka_location(delivery_id: str) -> dict[str, str | int]:
    """Partition and offset of a Kafka delivery id, ``<topic>/<partition>/<offset>``; {} for any other id."""
    parts = delivery_id.rsplit("/", 2)
    if len(parts) != 3:
        return {}
    try:
        return {PARTITION: str(int(parts[1])), KAFKA_OFFSET: int(parts[2])}
    except ValueError:
        return {}


class _Delivery:
    """One delivery's consumer span: current while the consumer works on it, ended at the outcome."""

    def __init__(self, span: trace.Span) -> None:
        self.span = span

    @contextlib.contextmanager
    def activate(self) -> Iterator[None]:
        with trace.use_span(self.span, end_on_exit=False, record_exception=False, set_status_on_exception=False):
            yield

    def end(self, decision: Decision | None, error: BaseException | None) -> None:
        """Records decision (None: the database failed, the delivery is handed back) and ends the span."""
        s = self.span
        msg = ""
        if decision is None:
            outcome = "handed_back"
            msg = str(error) if error is not None else ""
            s.set_attribute(ERROR_TYPE, ERROR_OTHER)
        elif isinstance(decision, Ack):
            outcome = "deduplicated" if decision.deduplicated else "handled"
        elif isinstance(decision, Defer):
            outcome = "deferred"
        elif isinstance(decision, Retry):
            outcome = "retry_scheduled"
            s.set_attribute(RETRY_DELAY, decision.delay_ms / 1000.0)
            msg = decision.next_envelope.last_error.message
            s.set_attribute(ERROR_TYPE, error_type(decision.next_envelope.last_error.code))
        else:
            outcome = "dead_lettered"
            s.set_attribute(DEAD_LETTER_REASON, decision.reason)
            msg = decision.error
            s.set_attribute(ERROR_TYPE, error_type(decision.code))
        s.set_attribute(OUTCOME, outcome)
        if error is not None:
            s.record_exception(error)
        elif msg:
            s.add_event("exception", {"exception.message": msg})
        if decision is None or isinstance(decision, (Retry, DeadLetter)):
            s.set_status(Status(StatusCode.ERROR, msg))
        s.end()


class Tracing:
    """Starts msgcontract's spans on a tracer provider (default: the global one).

    system is messaging.system: the transport ("kafka", "nats", "rabbitmq",
    or "msgcontract_sqlite" for the embedded queue, which the conventions do
    not name); group is messaging.consumer.group.name of the consumer spans;
    server_address and server_port, when given, are server.address and
    server.port on every span: the broker the transport talks to (its first
    bootstrap server for Kafka).
    """

    def __init__(self, tracer_provider: trace.TracerProvider | None = None, system: str = "msgcontract_sqlite",
                 group: str = "", server_address: str = "", server_port: int = 0) -> None:
        self.tracer = trace.get_tracer(SCOPE, tracer_provider=tracer_provider)
        self.system = system
        self.group = group
        self._server: dict[str, str | int] = {}
        if server_address:
            self._server[SERVER_ADDRESS] = server_address
            if server_port > 0:
                self._server[SERVER_PORT] = server_port

    def _common(self, operation: str, topic: str, env: _envelope_pb2.Envelope) -> dict[str, str | int]:
        """The attributes of span "{operation} {topic}" of one envelope (send and process: name and type alike)."""
        return {
            SYSTEM: self.system, OPERATION_NAME: operation, OPERATION_TYPE: operation, DESTINATION: topic,
            MESSAGE_ID: env.message_id, BIZ_KEY: env.biz_key, EVENT_TYPE: env.event_type,
            RETRY_COUNT: env.retry_count, **self._server,
        }

    @contextlib.contextmanager
    def publish(self, topic: str, env: _envelope_pb2.Envelope) -> Iterator[trace.Span]:
        """The producer span ``send <topic>``, injected into env in place of the trace it carried.

        Its parent is the current span, or else the trace env carries (a
        relay publishing what a producer wrote). An exception out of the
        block marks it failed, with error.type _OTHER.
        """
        parent = None if trace.get_current_span().get_span_context().is_valid else extract(env)
        attrs = self._common("send", topic, env)
        with self.tracer.start_as_current_span(f"send {topic}", context=parent, kind=SpanKind.PRODUCER,
                                               attributes=attrs) as span:
            env.ClearField("trace")
            inject(env)
            try:
                yield span
            except BaseException:
                span.set_attribute(ERROR_TYPE, ERROR_OTHER)
                raise

    def start(self, topic: str, handler: str, envelope: _envelope_pb2.Envelope,
              delivery_id: str | None = None) -> _Delivery:
        """Starts ``process <topic>`` for envelope: a child of its trace context, linked to it.

        With messaging.system kafka and a Kafka delivery id
        (``<topic>/<partition>/<offset>``, what KafkaConsumerLoop passes to
        Consumer.process) the span carries the record's partition and offset.
        """
        parent = extract(envelope)
        attrs = self._common("process", topic, envelope)
        if self.group:
            attrs[CONSUMER_GROUP] = self.group
        if self.system == SYSTEM_KAFKA and delivery_id is not None:
            attrs.update(_kafka_location(delivery_id))
        sc = trace.get_current_span(parent).get_span_context()
        links = [Link(sc)] if sc.is_valid and sc.is_remote else None
        span = self.tracer.start_span(f"process {topic}", context=parent, kind=SpanKind.CONSUMER,
                                      attributes=attrs, links=links)
        return _Delivery(span)


__all__ = ["Tracing", "error_type", "extract", "inject"]
