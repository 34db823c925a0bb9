"""The payload identity stored with a dedup claim (DESIGN.md "Payload hash").

Lower-case hex SHA-256 of the deterministic binary encoding of the decoded
payload message with its unknown fields dropped. The same message sent as
binary or as proto JSON, or encoded by another language, hashes the same; a
changed field does not. Go's dedup.HashMessage and Java's PayloadHash.of
compute the same value.
"""

from __future__ import annotations

import hashlib

from google.protobuf.message import Message


def of(msg: Message) -> str:
    """Returns the hash of msg (msg itself is not modified)."""
    known = type(msg)()
    known.CopyFrom(msg)
    # Part of the protobuf runtime API; types-protobuf's 7.x stubs declare it,
    # the oldest end's (5.29) do not.
    known.DiscardUnknownFields()  # type: ignore[attr-defined,unused-ignore]
    return hashlib.sha256(known.SerializeToString(deterministic=True)).hexdigest()
