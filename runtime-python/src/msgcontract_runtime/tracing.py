"""OpenTelemetry spans in the vocabulary the Go and Java runtimes share (docs/DESIGN.md, "Observability").

The envelope's ``trace`` field carries W3C ``traceparent``/``tracestate``.
``inject`` writes the current span into an envelope (an outbox writer calls
it, ``outbox.write(..., inject_trace=True)`` does); ``Tracing.publish`` is a
relay's producer span ``publish <topic>``; ``Tracing`` passed as
``Consumer(tracer=...)`` or ``AsyncConsumer(tracer=...)`` starts ``process
<topic>`` (kind CONSUMER) per delivery, a child of the envelope's context and
linked to it, current while the claim and the handler run, ended at the
outcome with the messaging semantic-convention attributes plus
``msgcontract.*``. A retry keeps the envelope's ``traceparent``, so every
attempt is a child of the same publish span.

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
        elif isinstance(decision, Ack):
            outcome = "deduplicated" if decision.deduplicated else "handled"
        elif isinstance(decision, Defer):
            outcome = "deferred"
        elif isinstance(decision, Retry):
            outcome = "retry_scheduled"
            s.set_attribute(RETRY_DELAY, decision.delay_ms / 1000.0)
            msg = decision.next_envelope.last_error.message
        else:
            outcome = "dead_lettered"
            s.set_attribute(DEAD_LETTER_REASON, decision.reason)
            msg = decision.error
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

    system is messaging.system: the transport ("kafka", "nats",
    "msgcontract_sqlite" for the embedded queue); group is
    messaging.consumer.group.name of the consumer spans.
    """

    def __init__(self, tracer_provider: trace.TracerProvider | None = None, system: str = "msgcontract_sqlite",
                 group: str = "") -> None:
        self.tracer = trace.get_tracer(SCOPE, tracer_provider=tracer_provider)
        self.system = system
        self.group = group

    def _common(self, topic: str, env: _envelope_pb2.Envelope) -> dict[str, str | int]:
        return {
            SYSTEM: self.system, DESTINATION: topic, MESSAGE_ID: env.message_id,
            BIZ_KEY: env.biz_key, EVENT_TYPE: env.event_type, RETRY_COUNT: env.retry_count,
        }

    @contextlib.contextmanager
    def publish(self, topic: str, env: _envelope_pb2.Envelope) -> Iterator[trace.Span]:
        """The producer span ``publish <topic>``, injected into env in place of the trace it carried.

        Its parent is the current span, or else the trace env carries (a
        relay publishing what a producer wrote).
        """
        parent = None if trace.get_current_span().get_span_context().is_valid else extract(env)
        attrs = self._common(topic, env)
        attrs.update({OPERATION_TYPE: "send", OPERATION_NAME: "publish"})
        with self.tracer.start_as_current_span(f"publish {topic}", context=parent, kind=SpanKind.PRODUCER,
                                               attributes=attrs) as span:
            env.ClearField("trace")
            inject(env)
            yield span

    def start(self, topic: str, handler: str, envelope: _envelope_pb2.Envelope) -> _Delivery:
        """Starts ``process <topic>`` for envelope: a child of its trace context, linked to it."""
        parent = extract(envelope)
        attrs = self._common(topic, envelope)
        attrs.update({OPERATION_TYPE: "process", OPERATION_NAME: "process"})
        if self.group:
            attrs[CONSUMER_GROUP] = self.group
        sc = trace.get_current_span(parent).get_span_context()
        links = [Link(sc)] if sc.is_valid and sc.is_remote else None
        span = self.tracer.start_span(f"process {topic}", context=parent, kind=SpanKind.CONSUMER,
                                      attributes=attrs, links=links)
        return _Delivery(span)


__all__ = ["Tracing", "extract", "inject"]
