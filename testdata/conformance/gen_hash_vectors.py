"""Writes hash.json: payload hash vectors (DESIGN.md "Payload hash").

The expected hashes are SHA-256 of canonical encodings written out here by
hand from the protobuf wire format (fields in number order, map entries
sorted by key, unknown fields dropped), never taken from an
implementation's output. The binary inputs are deliberately non-canonical
encodings of the same messages.
"""

import base64
import json

from wirefmt import h, ld, s, vi


def entry(key: str, value: int) -> bytes:
    return ld(4, s(1, key) + vi(2, value))


item = ld(5, s(1, "sku-1") + vi(2, 3))
canonical = s(1, "o1") + vi(2, 100) + s(3, "x") + s(3, "y") + entry("a", 1) + entry("b", 2) + item
changed = s(1, "o1") + vi(2, 101) + s(3, "x") + s(3, "y") + entry("a", 1) + entry("b", 2) + item
# The same message as canonical, written backwards, map entries unsorted,
# with an unknown varint field 99 and an unknown string field 100.
scrambled = (vi(99, 7) + item + entry("b", 2) + s(1, "o1") + entry("a", 1) + s(3, "x") + ld(100, b"zz")
             + vi(2, 100) + s(3, "y"))


def case(name, expect_bytes, **inp):
    c = {"name": name, "kind": "payload_hash", "message": "conf.hash.v1.Order"}
    c.update(inp)
    c["expect"] = {"payload_hash": h(expect_bytes)}
    return c


json_input = {"id": "o1", "amount": "100", "tags": ["x", "y"], "counts": {"b": 2, "a": 1},
              "item": {"sku": "sku-1", "qty": 3}}
json_reordered = {"item": {"qty": 3, "sku": "sku-1"}, "counts": {"a": 1, "b": 2}, "tags": ["x", "y"],
                  "amount": 100, "id": "o1"}
cases = [
    case("binary-canonical", canonical, input_binary=base64.b64encode(canonical).decode()),
    case("binary-scrambled-with-unknown-fields", canonical, input_binary=base64.b64encode(scrambled).decode()),
    case("json", canonical, input=json_input),
    case("json-reordered", canonical, input=json_reordered),
    case("changed-field", changed, input=dict(json_input, amount="101")),
    case("empty-message", b"", input={}),
]
with open("hash.json", "w") as f:
    json.dump({"proto_root": "proto", "files": ["conf/hash/v1/hash.proto"], "cases": cases}, f, indent=1)
    f.write("\n")
