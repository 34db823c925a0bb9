"""The protobuf wire format, spelled out byte by byte, for the vector
generators (gen_hash_vectors.py, gen_edition_vectors.py): their expected
hashes come from encodings written here by hand, never from a protobuf
implementation.
"""

import hashlib


def varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def tag(field: int, wire: int) -> bytes:
    return varint(field << 3 | wire)


def ld(field: int, data: bytes) -> bytes:
    """A length-delimited field."""
    return tag(field, 2) + varint(len(data)) + data


def vi(field: int, n: int) -> bytes:
    """A varint field."""
    return tag(field, 0) + varint(n)


def s(field: int, text: str) -> bytes:
    """A string field."""
    return ld(field, text.encode())


def group(field: int, data: bytes) -> bytes:
    """A delimited (group-encoded) message field."""
    return tag(field, 3) + data + tag(field, 4)


def h(b: bytes) -> str:
    """Lower-case hex SHA-256, DESIGN.md's payload hash of canonical bytes."""
    return hashlib.sha256(b).hexdigest()
