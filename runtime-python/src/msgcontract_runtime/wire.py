"""The Confluent Schema Registry wire format for Protobuf, as runtime-go/confluent writes it.

A framed value is: magic byte 0, the schema id as a big-endian int32, the
message-index array (zigzag varint count, then each index as a zigzag
varint; the common [0] is the single byte 0), then the binary message.
On Kafka the framed bytes are the event *payload*; the rest of the envelope
travels in the ``msgcontract.envelope`` header (``split``/``join``).
Golden bytes: testdata/kafka-wire/frames.json, checked by Go and Python.
"""

from __future__ import annotations

import struct
from typing import Protocol

from google.protobuf import descriptor_pb2 as _descriptor_pb2

from msgcontract.v1 import envelope_pb2 as _envelope_pb2

MAGIC_BYTE = 0
HEADER_ENVELOPE = "msgcontract.envelope"
"""The header holding the envelope without its payload, binary protobuf."""

_MAX_DEPTH = 100


class _FileDescriptor(Protocol):
    @property
    def serialized_pb(self) -> bytes: ...


class MessageDescriptor(Protocol):
    """A message's descriptor, as message_index reads it: both
    google.protobuf.descriptor.Descriptor and the upb backend's, which
    types-protobuf's 7.x stubs tell apart in Message.DESCRIPTOR."""

    @property
    def name(self) -> str: ...

    @property
    def containing_type(self) -> MessageDescriptor | None: ...

    @property
    def file(self) -> _FileDescriptor: ...


class FrameError(ValueError):
    """Bytes that are not a Confluent Protobuf frame."""


def _varint(n: int) -> bytes:
    z = (n << 1) ^ (n >> 63)
    out = bytearray()
    while True:
        b = z & 0x7F
        z >>= 7
        if z:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _read_varint(b: bytes, pos: int) -> tuple[int, int]:
    shift = z = 0
    while True:
        if pos >= len(b) or shift > 63:
            raise FrameError("truncated varint")
        c = b[pos]
        pos += 1
        z |= (c & 0x7F) << shift
        shift += 7
        if not c & 0x80:
            return (z >> 1) ^ -(z & 1), pos


def frame(schema_id: int, index: list[int], payload: bytes) -> bytes:
    """Returns payload framed with schema_id and its message-index path."""
    head = struct.pack(">bI", MAGIC_BYTE, schema_id)
    if index == [0]:
        head += _varint(0)
    else:
        head += _varint(len(index)) + b"".join(_varint(i) for i in index)
    return head + payload


def unframe(value: bytes) -> tuple[int, list[int], bytes]:
    """Splits a framed value into schema id, message-index path and payload."""
    if len(value) < 6 or value[0] != MAGIC_BYTE:
        raise FrameError(f"not a Confluent Protobuf frame: {len(value)} bytes")
    (schema_id,) = struct.unpack(">I", value[1:5])
    n, pos = _read_varint(value, 5)
    if n < 0 or n > _MAX_DEPTH:
        raise FrameError("bad message-index count")
    if n == 0:
        return schema_id, [0], value[pos:]
    index = []
    for _ in range(n):
        i, pos = _read_varint(value, pos)
        if i < 0:
            raise FrameError("bad message index")
        index.append(i)
    return schema_id, index, value[pos:]


def is_framed(value: bytes) -> bool:
    """A binary envelope never starts with byte 0 (there is no field 0)."""
    return len(value) > 0 and value[0] == MAGIC_BYTE


def message_index(d: MessageDescriptor) -> list[int]:
    """d's path in its file: index among the top-level messages, then among nested ones."""
    fdp = _descriptor_pb2.FileDescriptorProto.FromString(d.file.serialized_pb)
    names: list[str] = []
    cur: MessageDescriptor | None = d
    while cur is not None:
        names.insert(0, cur.name)
        cur = cur.containing_type
    path: list[int] = []
    level = list(fdp.message_type)
    for name in names:
        i = [m.name for m in level].index(name)
        path.append(i)
        level = list(level[i].nested_type)
    return path


def split(env: _envelope_pb2.Envelope) -> tuple[bytes, bytes]:
    """Returns (header bytes: the envelope without payload, payload)."""
    head = _envelope_pb2.Envelope()
    head.CopyFrom(env)
    head.ClearField("payload")
    return head.SerializeToString(deterministic=True), env.payload


def join(header: bytes, payload: bytes) -> _envelope_pb2.Envelope:
    """The envelope of a framed record: the header's fields with the frame's payload."""
    env = _envelope_pb2.Envelope()
    env.ParseFromString(header)
    env.payload = payload
    if not env.content_type:
        env.content_type = "application/protobuf"
    return env
