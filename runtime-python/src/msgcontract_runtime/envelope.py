"""The envelope codec: binary protobuf on the wire, proto JSON (proto field names) for humans."""

from __future__ import annotations

import secrets
import time

from google.protobuf import json_format as _json_format, message as _message
from google.protobuf.message import DecodeError as _ProtoDecodeError

from msgcontract.v1 import envelope_pb2 as _envelope_pb2
from msgcontract_runtime.event import DecodeError, EventSpec, M

CONTENT_TYPE_PROTO = "application/protobuf"
CONTENT_TYPE_JSON = "application/json"


def to_json(message: _message.Message) -> str:
    """Prints message as compact proto JSON with proto (snake_case) field names."""
    return str(_json_format.MessageToJson(message, preserving_proto_field_name=True, indent=None))


def new_message_id() -> str:
    """Returns 32 random lower-case hex digits."""
    return secrets.token_hex(16)


def new_envelope(
    spec: EventSpec[M], message: M, occurred_at_ms: int | None = None, json: bool = False
) -> _envelope_pb2.Envelope:
    """Wraps message in a new envelope: random message id, rendered biz_key, event type, topic.

    The payload is binary protobuf, or proto JSON with proto field names when
    json is true. occurred_at_ms defaults to now (UTC epoch milliseconds).
    """
    if occurred_at_ms is None:
        occurred_at_ms = int(time.time() * 1000)
    if json:
        ct, payload = CONTENT_TYPE_JSON, to_json(message).encode("utf-8")
    else:
        ct, payload = CONTENT_TYPE_PROTO, message.SerializeToString(deterministic=True)
    return _envelope_pb2.Envelope(
        message_id=new_message_id(),
        biz_key=spec.biz_key(message),
        event_type=spec.event_type,
        topic=spec.topic,
        occurred_at=occurred_at_ms,
        content_type=ct,
        payload=payload,
    )


def encode(env: _envelope_pb2.Envelope) -> bytes:
    """Encodes env as deterministic binary protobuf."""
    return env.SerializeToString(deterministic=True)


def _check(env: _envelope_pb2.Envelope) -> _envelope_pb2.Envelope:
    if not env.biz_key or not env.event_type:
        raise DecodeError("envelope: missing biz_key or event_type")
    return env


def decode(body: bytes) -> _envelope_pb2.Envelope:
    """Decodes a binary envelope; one without biz_key or event_type is rejected."""
    env = _envelope_pb2.Envelope()
    try:
        env.ParseFromString(body)
    except _ProtoDecodeError as e:
        raise DecodeError(f"envelope: cannot decode: {e}") from e
    return _check(env)


def encode_json(env: _envelope_pb2.Envelope) -> str:
    """Encodes env as proto JSON with proto field names."""
    return to_json(env)


def decode_json(text: str | bytes) -> _envelope_pb2.Envelope:
    """Decodes a proto JSON envelope; both field-name forms are accepted."""
    env = _envelope_pb2.Envelope()
    try:
        _json_format.Parse(text, env)
    except _json_format.ParseError as e:
        raise DecodeError(f"envelope: cannot decode JSON: {e}") from e
    return _check(env)


def payload(spec: EventSpec[M], env: _envelope_pb2.Envelope) -> M:
    """Decodes env's payload as spec's message by its content type (binary when unset)."""
    if env.content_type in ("", CONTENT_TYPE_PROTO):
        return spec.parse_binary(env.payload)
    if env.content_type == CONTENT_TYPE_JSON:
        return spec.parse_json(env.payload)
    raise DecodeError(f"envelope: unknown content type {env.content_type!r}")
