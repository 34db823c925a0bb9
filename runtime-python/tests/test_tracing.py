"""The spans of docs/DESIGN.md ("Observability") from the Python runtime, as Go and Java start them."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

import msgcontract_runtime as mc
from msgcontract.v1 import envelope_pb2
from msgcontract_runtime import outbox, tracing
from msgcontract_runtime.aio import AsyncConsumer, Registry, register
from msgcontract_runtime.aio.sqlite import SQLiteDatabase
from test_runtime import SPEC


def provider() -> tuple[TracerProvider, InMemorySpanExporter]:
    exp = InMemorySpanExporter()
    tp = TracerProvider()
    tp.add_span_processor(SimpleSpanProcessor(exp))
    return tp, exp


def attrs(s: ReadableSpan) -> dict[str, Any]:
    return dict(s.attributes or {})


def test_outbox_relay_and_consumer_share_one_trace_across_retries() -> None:
    tp, exp = provider()
    tr = tracing.Tracing(tp, "msgcontract_sqlite", "grp")
    conn = sqlite3.connect(":memory:")
    outbox.migrate(conn)
    mc.migrate(conn)
    env = mc.new_envelope(SPEC, envelope_pb2.LastError(range="fail"), occurred_at_ms=1)
    with tp.get_tracer("test").start_as_current_span("order pay") as app:
        outbox.write(conn, env)  # injects the current span: the app uses OpenTelemetry
    conn.commit()
    trace_id = format(app.get_span_context().trace_id, "032x")
    assert trace_id in env.trace.traceparent

    published: list[envelope_pb2.Envelope] = []

    class Pub:
        def publish(self, topic: str, e: envelope_pb2.Envelope) -> None:
            published.append(e)

    assert outbox.relay_once(conn, Pub(), tracer=tr) == 1
    seen: list[str] = []

    def handler(tx: Any, m: envelope_pb2.LastError, e: envelope_pb2.Envelope) -> None:
        seen.append(format(trace.get_current_span().get_span_context().trace_id, "032x"))
        if e.retry_count == 0:
            raise SPEC.rules.error(50301, "ledger down")

    c = mc.Consumer(SPEC, "h", handler, clock_ms=lambda: 10_000, rand=lambda: 0.0, tracer=tr)
    d = c.process(conn, mc.encode(published[0]))
    assert isinstance(d, mc.Retry)
    retry = d.next_envelope
    assert retry.trace == published[0].trace
    retry.not_before = 0
    assert c.process(conn, mc.encode(retry)) == mc.Ack()
    assert c.process(conn, mc.encode(retry)) == mc.Ack(deduplicated=True)
    late = mc.new_envelope(SPEC, envelope_pb2.LastError(range="late"), occurred_at_ms=1)
    late.not_before = 10**15
    assert isinstance(c.process(conn, mc.encode(late)), mc.Defer)
    assert isinstance(c.process(conn, b"not an envelope"), mc.DeadLetter)
    assert seen == [trace_id, trace_id], "the handler runs inside the process span"

    spans = exp.get_finished_spans()
    names = [s.name for s in spans]
    assert names == ["order pay", "send errors", "process errors", "process errors", "process errors",
                     "process errors"], names
    pub = spans[1]
    assert pub.kind == SpanKind.PRODUCER
    assert pub.parent is not None and pub.parent.span_id == app.get_span_context().span_id
    assert attrs(pub)["messaging.operation.type"] == "send"
    assert format(pub.context.span_id, "016x") in published[0].trace.traceparent
    outcomes = []
    for s in spans[2:5]:
        a = attrs(s)
        assert s.kind == SpanKind.CONSUMER
        assert format(s.context.trace_id, "032x") == trace_id
        assert s.parent is not None and s.parent.span_id == pub.context.span_id
        assert len(s.links) == 1
        assert a["messaging.system"] == "msgcontract_sqlite"
        assert a["messaging.destination.name"] == "errors"
        assert a["messaging.operation.type"] == "process"
        assert a["messaging.consumer.group.name"] == "grp"
        assert a["messaging.message.id"] == env.message_id
        assert a["msgcontract.biz_key"] == "range:fail"
        assert a["msgcontract.event_type"] == SPEC.event_type
        outcomes.append(f'{a["msgcontract.outcome"]}/{a["msgcontract.retry_count"]}')
    assert outcomes == ["retry_scheduled/0", "handled/1", "deduplicated/1"]
    assert spans[2].status.status_code == StatusCode.ERROR
    assert attrs(spans[2])["msgcontract.retry_delay_seconds"] == 1.0
    assert spans[3].status.status_code == StatusCode.UNSET
    assert attrs(spans[5])["msgcontract.outcome"] == "deferred"


def test_async_consumer_spans_its_deliveries(arun: Callable[..., Any], tmp_path: Path) -> None:
    tp, exp = provider()

    async def handler(tx: Any, m: envelope_pb2.LastError, e: envelope_pb2.Envelope) -> None:
        if m.range == "fail-business":
            raise SPEC.rules.error(40001, "closed")

    async def main() -> list[mc.Decision]:
        db = await SQLiteDatabase.open(str(tmp_path / "b.db"), 1)
        c = AsyncConsumer(SPEC, "h", handler, clock_ms=lambda: 5000, rand=lambda: 0.5,
                          tracer=tracing.Tracing(tp, "kafka", "g"))
        try:
            return [await c.process(db, mc.encode(mc.new_envelope(SPEC, envelope_pb2.LastError(range=r), 1)))
                    for r in ("ok", "fail-business")]
        finally:
            await db.close()

    got = arun(main)
    assert [type(d).__name__ for d in got] == ["Ack", "DeadLetter"]
    spans = exp.get_finished_spans()
    assert [attrs(s)["msgcontract.outcome"] for s in spans] == ["handled", "dead_lettered"]
    assert attrs(spans[1])["msgcontract.dead_letter_reason"] == "non_retryable"
    assert spans[1].status.status_code == StatusCode.ERROR
    assert attrs(spans[0])["messaging.system"] == "kafka"


def test_registered_async_consumer_is_observed_and_traced(arun: Callable[..., Any], tmp_path: Path) -> None:
    """What generated register_<event>_handler_async(..., observer=, tracer=) passes on."""
    tp, exp = provider()
    seen: list[mc.Outcome] = []

    async def handler(tx: Any, m: envelope_pb2.LastError, e: envelope_pb2.Envelope) -> None:
        pass

    async def main() -> mc.Decision:
        db = await SQLiteDatabase.open(str(tmp_path / "r.db"), 1)
        c = register(Registry(), SPEC, "h", handler, observer=seen.append, tracer=tracing.Tracing(tp, "kafka", "g"))
        try:
            return await c.process(db, mc.encode(mc.new_envelope(SPEC, envelope_pb2.LastError(range="ok"), 1)))
        finally:
            await db.close()

    assert type(arun(main)).__name__ == "Ack"
    assert [(o.handler, type(o.decision).__name__) for o in seen] == [("h", "Ack")]
    assert [attrs(s)["msgcontract.outcome"] for s in exp.get_finished_spans()] == ["handled"]


def test_without_a_span_nothing_is_injected() -> None:
    env = mc.new_envelope(SPEC, envelope_pb2.LastError(range="x"), occurred_at_ms=1)
    tracing.inject(env)
    assert not env.HasField("trace")
