"""The relay's and the consumer's spans against testdata/otel/messaging-spans.tsv, as Go and Java check theirs.

Names, kinds, required attributes and their pinned values, the recommended
ones this run knows (the broker, the Kafka record's place), error.type
exactly on failed spans, and no attribute the table does not list.
"""

from __future__ import annotations

import dataclasses
import pathlib
import sqlite3
from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import StatusCode

import msgcontract_runtime as mc
from msgcontract.v1 import envelope_pb2
from msgcontract_runtime import outbox, tracing
from test_runtime import SPEC
from test_tracing import attrs, provider

TABLE = pathlib.Path(__file__).resolve().parents[2] / "testdata" / "otel" / "messaging-spans.tsv"


@dataclasses.dataclass(frozen=True)
class Row:
    span: str
    name: str
    kind: str
    languages: list[str]
    transport: str
    level: str
    attrs: list[str]


def table() -> list[Row]:
    rows = []
    for line in TABLE.read_text().splitlines():
        if not line or line.startswith("#"):
            continue
        c = line.split("\t")
        assert len(c) == 7, line
        rows.append(Row(c[0], c[1], c[2], c[3].split(","), c[4], c[5], c[6].split(",")))
    return rows


def check(rows: list[Row], spans: list[ReadableSpan], system: str) -> None:
    """Checks spans against rows for Python and system; each span the table lists for Python must be among them."""
    seen = set()
    for s in spans:
        a = attrs(s)
        op = a.get("messaging.operation.type")
        seen.add(op)
        mine = [r for r in rows if r.span == op and "python" in r.languages and r.transport in ("*", system)]
        assert mine, f"span {s.name!r} (operation type {op!r}) is not in the table"
        name = mine[0].name.replace("{messaging.operation.name}", str(a["messaging.operation.name"]))
        if "messaging.destination.name" in a:
            name = name.replace("{destination}", str(a["messaging.destination.name"]))
        else:
            name = name.replace(" {destination}", "")
        assert s.name == name
        assert s.kind.name == mine[0].kind, s.name
        failed = s.status.status_code == StatusCode.ERROR
        listed = set()
        for r in mine:
            for attr in r.attrs:
                key, _, values = attr.partition("=")
                listed.add(key)
                where = f"{s.name} {a.get('msgcontract.outcome')}: {r.level} {key}"
                if r.level in ("required", "recommended"):
                    assert key in a, f"{where} missing"
                elif r.level == "on_error":
                    assert (key in a) == failed, f"{where} with status {s.status.status_code}"
                if values and key in a:
                    assert str(a[key]) in values.split("|"), f"{where} = {a[key]!r}, want one of {values}"
        unlisted = set(a) - listed
        assert not unlisted, f"{s.name}: attributes not in the table: {sorted(unlisted)}"
        assert a["messaging.system"] == system
    for r in rows:
        assert "python" not in r.languages or r.span in seen, f"no {r.span} span seen"


def test_relay_and_consumer_spans_match_the_table() -> None:
    tp, exp = provider()
    tr = tracing.Tracing(tp, "kafka", "payments", server_address="broker.test", server_port=9092)
    conn = sqlite3.connect(":memory:")
    outbox.migrate(conn)
    mc.migrate(conn)
    with tp.get_tracer("test").start_as_current_span("order pay"):
        outbox.write(conn, mc.new_envelope(SPEC, envelope_pb2.LastError(range="fail"), occurred_at_ms=1))
        outbox.write(conn, mc.new_envelope(SPEC, envelope_pb2.LastError(range="down"), occurred_at_ms=1))
    conn.commit()

    sent: list[envelope_pb2.Envelope] = []

    class Pub:
        def publish(self, topic: str, e: envelope_pb2.Envelope) -> None:
            if e.biz_key == "range:down":
                raise RuntimeError("broker down")
            sent.append(e)

    with pytest.raises(RuntimeError, match="broker down"):
        outbox.relay_once(conn, Pub(), tracer=tr)
    assert len(sent) == 1

    def handler(tx: Any, m: envelope_pb2.LastError, e: envelope_pb2.Envelope) -> None:
        if e.retry_count == 0:
            raise SPEC.rules.error(50301, "ledger down")

    c = mc.Consumer(SPEC, "h", handler, clock_ms=lambda: 10_000, rand=lambda: 0.0, tracer=tr)
    d = c.process(conn, mc.encode(sent[0]), "errors/3/40")
    assert isinstance(d, mc.Retry)
    retry = d.next_envelope
    retry.not_before = 0
    assert c.process(conn, mc.encode(retry), "errors/3/41") == mc.Ack()
    bad = envelope_pb2.Envelope()
    bad.CopyFrom(sent[0])
    bad.payload = b"\xff\x01"
    assert isinstance(c.process(conn, mc.encode(bad), "errors/3/42"), mc.DeadLetter)

    ours = [s for s in exp.get_finished_spans() if s.instrumentation_scope is not None
            and s.instrumentation_scope.name == tracing.SCOPE]
    assert [s.name for s in ours] == ["send errors", "send errors", "process errors", "process errors",
                                      "process errors"]
    check(table(), ours, "kafka")
    error_types = {f"{s.name}/{attrs(s).get('msgcontract.outcome')}": attrs(s).get("error.type") for s in ours}
    assert error_types == {"send errors/None": "_OTHER", "process errors/retry_scheduled": "50301",
                           "process errors/handled": None, "process errors/dead_lettered": "-3"}
    assert [attrs(s)["messaging.kafka.offset"] for s in ours[2:]] == [40, 41, 42]
