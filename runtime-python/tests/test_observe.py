"""The vocabulary of docs/DESIGN.md ("Observability") from the Python runtime."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path

import prometheus_client
from prometheus_client import CollectorRegistry

import msgcontract_runtime as mc
from msgcontract.v1 import envelope_pb2
from msgcontract_runtime.consumer import process_batch
from msgcontract_runtime.observe import JsonLog, PrometheusMetrics, fan_out
from test_runtime import SPEC


def test_metrics_and_log_lines_use_the_shared_names() -> None:
    reg = CollectorRegistry()
    lines: list[str] = []

    def handler(tx: object, m: envelope_pb2.LastError, env: object) -> None:
        if m.range == "fail":
            raise SPEC.rules.error(50301, "ledger down")

    c = mc.Consumer(SPEC, "h", handler, clock_ms=lambda: 10_000, rand=lambda: 0.0,
                    observer=fan_out(PrometheusMetrics(reg), JsonLog(lines.append)))
    conn = sqlite3.connect(":memory:")
    mc.migrate(conn)
    ok = mc.new_envelope(SPEC, envelope_pb2.LastError(range="ok"), occurred_at_ms=1)
    ok.trace.traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
    c.process(conn, mc.encode(ok))
    c.process(conn, mc.encode(ok))
    c.process(conn, mc.encode(mc.new_envelope(SPEC, envelope_pb2.LastError(range="fail"), occurred_at_ms=1)))
    c.process(conn, b"not an envelope")

    text = prometheus_client.generate_latest(reg).decode()
    series = {line.split("{")[0].split(" ")[0] for line in text.splitlines() if line and not line.startswith("#")}
    assert series == {
        "msgcontract_end_to_end_latency_seconds_bucket", "msgcontract_end_to_end_latency_seconds_count",
        "msgcontract_end_to_end_latency_seconds_sum",
        "msgcontract_handler_duration_seconds_bucket", "msgcontract_handler_duration_seconds_count",
        "msgcontract_handler_duration_seconds_sum", "msgcontract_messages_processed_total",
        "msgcontract_retry_delay_seconds_bucket", "msgcontract_retry_delay_seconds_count",
        "msgcontract_retry_delay_seconds_sum",
    }, text
    for outcome in ("handled", "deduplicated", "retry_scheduled", "dead_lettered"):
        assert f'outcome="{outcome}"}} 1.0' in text, outcome
    assert 'msgcontract_retry_delay_seconds_bucket{event_type="ERROR_SEEN",handler="h",le="1.5"} 1.0' in text

    assert len(lines) == 4
    first = json.loads(lines[0])
    del first["time"]
    assert first == {
        "level": "INFO", "msg": "msgcontract: handled", "handler": "h", "topic": "errors",
        "message_id": ok.message_id, "biz_key": "range:ok", "retry_count": 0, "event_type": "ERROR_SEEN",
        "trace_id": "4bf92f3577b34da6a3ce929d0e0e4736", "span_id": "00f067aa0ba902b7", "outcome": "handled",
    }
    retry = json.loads(lines[2])
    assert (retry["outcome"], retry["code"], retry["delay_seconds"]) == ("retry_scheduled", 50301, 1.0)
    dead = json.loads(lines[3])
    assert (dead["outcome"], dead["reason"], dead["code"], dead["handler"], "event_type" in dead) == (
        "dead_lettered", "decode", -3, "", False)
    assert 'msgcontract_messages_processed_total{event_type="",handler="",outcome="dead_lettered"} 1.0' in text


GO_END_TO_END_LE = [
    "0.001", "0.002", "0.004", "0.008", "0.016", "0.032", "0.064", "0.128", "0.256", "0.512",
    "1.024", "2.048", "4.096", "8.192", "16.384", "32.768", "65.536", "131.072", "262.144", "524.288",
    "1048.576", "2097.152", "+Inf",
]
"""runtime-go/metrics' EndToEndBuckets as its text format writes them (TestEndToEndBuckets), then +Inf."""


def test_end_to_end_latency_runs_from_occurred_at_to_the_commit() -> None:
    """One observation per handled delivery, from its occurred_at to the consumer's clock after the commit, in
    its own transaction and in a shared one: none for a duplicate, a retry or an envelope without occurred_at;
    0 for a producer clock ahead of the consumer's."""
    reg = CollectorRegistry()

    def handler(tx: object, m: envelope_pb2.LastError, env: object) -> None:
        if m.range == "fail":
            raise SPEC.rules.error(50301, "ledger down")

    c = mc.Consumer(SPEC, "h", handler, clock_ms=lambda: 100_000, rand=lambda: 0.0, observer=PrometheusMetrics(reg))
    conn = sqlite3.connect(":memory:")
    mc.migrate(conn)

    def body(r: str, occurred_at_ms: int) -> bytes:
        return mc.encode(mc.new_envelope(SPEC, envelope_pb2.LastError(range=r), occurred_at_ms=occurred_at_ms))

    slow = body("slow", 98_500)  # 1.5 s: le 2.048
    c.process(conn, slow)
    c.process(conn, slow)  # deduplicated
    c.process(conn, body("fail", 99_000))  # retry_scheduled
    c.process(conn, body("none", 0))  # a producer that did not set occurred_at
    assert process_batch(conn, [(c, body("ahead", 103_000), "")]) == [mc.Ack()]  # the producer's clock ahead: 0

    text = prometheus_client.generate_latest(reg).decode()
    series = 'msgcontract_end_to_end_latency_seconds_bucket{event_type="ERROR_SEEN",handler="h",le="'
    buckets = [line[len(series):] for line in text.splitlines() if line.startswith(series)]
    assert [b.split('"')[0] for b in buckets] == GO_END_TO_END_LE, text
    for b in buckets:
        le, count = b.split('"} ')
        assert float(count) == (2.0 if float(le) >= 2.048 else 1.0), b  # the one ahead at 0, then 1.5 s
    assert "# HELP msgcontract_end_to_end_latency_seconds Time from the envelope's occurred_at" in text
    assert 'msgcontract_end_to_end_latency_seconds_count{event_type="ERROR_SEEN",handler="h"} 2.0' in text
    assert 'msgcontract_end_to_end_latency_seconds_sum{event_type="ERROR_SEEN",handler="h"} 1.5' in text


def test_consumer_lag_is_the_shared_gauge() -> None:
    reg = CollectorRegistry()
    m = PrometheusMetrics(reg)
    assert "msgcontract_consumer_lag_messages" not in prometheus_client.generate_latest(reg).decode()
    m.forget("billing", "ns.orders", 1)  # never reported: nothing to drop
    m.lag("billing", "ns.orders", 2, 15)
    m.lag("billing", "ns.orders", 0, -1)  # a high watermark older than the fetch: never negative
    text = prometheus_client.generate_latest(reg).decode()
    assert "# TYPE msgcontract_consumer_lag_messages gauge" in text
    assert 'msgcontract_consumer_lag_messages{group="billing",partition="2",topic="ns.orders"} 15.0' in text, text
    assert 'msgcontract_consumer_lag_messages{group="billing",partition="0",topic="ns.orders"} 0.0' in text, text
    m.forget("billing", "ns.orders", 2)  # revoked: its next owner reports it
    assert 'partition="2"' not in prometheus_client.generate_latest(reg).decode()


def _scrape(reg: CollectorRegistry) -> list[str]:
    """The registry's samples, handler_duration's sum left out (wall-clock time)."""
    text = prometheus_client.generate_latest(reg).decode()
    return sorted(line for line in text.splitlines()
                  if line and not line.startswith("#")
                  and not line.startswith("msgcontract_handler_duration_seconds_sum")
                  and not line.startswith("msgcontract_handler_duration_seconds_bucket"))


def test_async_consumer_series_equal_the_sync_ones(tmp_path: Path) -> None:
    """The same bodies through Consumer and AsyncConsumer: the same metric samples and log lines."""
    from msgcontract_runtime.aio import AsyncConsumer
    from msgcontract_runtime.aio.sqlite import SQLiteDatabase

    def fail(m: envelope_pb2.LastError) -> None:
        if m.range == "fail":
            raise SPEC.rules.error(50301, "ledger down")
        if m.range == "refused":
            raise SPEC.rules.error(40001, "closed")

    ok = mc.encode(mc.new_envelope(SPEC, envelope_pb2.LastError(range="ok"), occurred_at_ms=1))
    garbled = mc.new_envelope(SPEC, envelope_pb2.LastError(range="garbled"), occurred_at_ms=1)
    garbled.payload = b"\xff\xff"
    late = mc.new_envelope(SPEC, envelope_pb2.LastError(range="late"), occurred_at_ms=1)
    late.not_before = 10**15
    bodies = [ok, ok, b"not an envelope", mc.encode(garbled), mc.encode(late)] + [
        mc.encode(mc.new_envelope(SPEC, envelope_pb2.LastError(range=r), occurred_at_ms=1))
        for r in ("fail", "refused")]

    sync_reg, sync_lines = CollectorRegistry(), list[str]()
    conn = sqlite3.connect(":memory:")
    mc.migrate(conn)
    sync = mc.Consumer(SPEC, "h", lambda tx, m, e: fail(m), clock_ms=lambda: 10_000, rand=lambda: 0.0,
                       observer=fan_out(PrometheusMetrics(sync_reg), JsonLog(sync_lines.append)))
    for b in bodies:
        sync.process(conn, b)

    async_reg, async_lines = CollectorRegistry(), list[str]()

    async def handler(tx: object, m: envelope_pb2.LastError, e: envelope_pb2.Envelope) -> None:
        fail(m)

    async def main() -> None:
        db = await SQLiteDatabase.open(str(tmp_path / "b.db"), 1)
        c = AsyncConsumer(SPEC, "h", handler, clock_ms=lambda: 10_000, rand=lambda: 0.0,
                          observer=fan_out(PrometheusMetrics(async_reg), JsonLog(async_lines.append)))
        try:
            for b in bodies:
                await c.process(db, b)
        finally:
            await db.close()

    asyncio.run(main())
    assert _scrape(async_reg) == _scrape(sync_reg)
    assert 'msgcontract_messages_processed_total{event_type="ERROR_SEEN",handler="h",outcome="dead_lettered"} 2.0' in \
        _scrape(async_reg)
    assert 'msgcontract_handler_duration_seconds_count{event_type="ERROR_SEEN",handler="h"} 3.0' in _scrape(async_reg)
    # ok is handled once, 9.999 s after it occurred, on either consumer
    assert 'msgcontract_end_to_end_latency_seconds_sum{event_type="ERROR_SEEN",handler="h"} 9.999' in _scrape(async_reg)

    def fields(lines: list[str]) -> list[dict[str, object]]:
        out = []
        for line in lines:
            f = json.loads(line)
            del f["time"]
            out.append(f)
        return out

    assert len(async_lines) == 6
    assert fields(async_lines) == fields(sync_lines)
