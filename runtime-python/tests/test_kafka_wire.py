"""The Confluent frame against the golden vectors runtime-go checks too."""

from __future__ import annotations

import json
import pathlib
from typing import Any

import pytest
from google.protobuf import json_format

from msgcontract.v1 import envelope_pb2
from msgcontract_runtime import wire

VECTORS = pathlib.Path(__file__).resolve().parents[2] / "testdata" / "kafka-wire" / "frames.json"


def _records() -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = json.loads(VECTORS.read_text())["records"]
    assert records
    return records


@pytest.mark.parametrize("rec", _records(), ids=lambda r: str(r["name"]))
def test_golden_records(rec: dict[str, Any]) -> None:
    env = envelope_pb2.Envelope()
    json_format.ParseDict(rec["envelope"], env)
    head, payload = wire.split(env)
    assert head.hex() == rec["header_hex"]
    assert wire.frame(rec["schema_id"], rec["index"], payload).hex() == rec["value_hex"]
    assert env.biz_key.encode().hex() == rec["key_hex"]
    assert wire.join(head, payload) == env


def _cases() -> list[dict[str, object]]:
    cases: list[dict[str, object]] = json.loads(VECTORS.read_text())["cases"]
    assert cases
    return cases


@pytest.mark.parametrize("case", _cases(), ids=lambda c: str(c["name"]))
def test_golden_frames(case: dict[str, object]) -> None:
    payload = bytes.fromhex(str(case["payload_hex"]))
    index = [int(i) for i in case["index"]]  # type: ignore[attr-defined]
    assert wire.frame(int(case["schema_id"]), index, payload).hex() == case["framed_hex"]  # type: ignore[call-overload]
    sid, idx, p = wire.unframe(bytes.fromhex(str(case["framed_hex"])))
    assert (sid, idx, p) == (case["schema_id"], index, payload)


@pytest.mark.parametrize(
    "value",
    [b"", b"\x00\x00\x00\x00\x01", b"\x01\x00\x00\x00\x01\x00", b"\x00\x00\x00\x00\x01\x01",
     b"\x00\x00\x00\x00\x01\x04\x02"],
)
def test_unframe_rejects(value: bytes) -> None:
    with pytest.raises(wire.FrameError):
        wire.unframe(value)


def test_message_index_and_split() -> None:
    assert wire.message_index(envelope_pb2.Envelope.DESCRIPTOR) == [0]
    assert wire.message_index(envelope_pb2.TraceContext.DESCRIPTOR) == [2]
    env = envelope_pb2.Envelope(biz_key="k", event_type="E", payload=b"\x0a\x01x")
    head, payload = wire.split(env)
    assert payload == b"\x0a\x01x"
    assert not wire.is_framed(head)
    back = wire.join(head, payload)
    assert back.biz_key == "k" and back.payload == payload and back.content_type == "application/protobuf"
