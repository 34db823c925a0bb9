"""Writes editions.json: edition-2024 vectors (docs/protobuf.md).

Keys follow DESIGN.md's rules with edition 2024's presence: a field has
explicit presence unless it says IMPLICIT, so a counter set to 0 renders
"0" and an unset one fails the key, as an unset proto3 `optional` field
does. Payload hashes are SHA-256 of canonical encodings written out here
from the wire format and the fields' features (a present zero is encoded,
an implicit zero is not; packed vs expanded repeated scalars; a delimited
field as a group), never taken from an implementation's output. The binary
inputs encode the same messages non-canonically: fields backwards, the
packed field expanded and the expanded one packed (parsers accept both),
unknown fields added.
"""

import base64
import json

from wirefmt import group, h, ld, s, varint, vi

SHAPED, NESTED = "conf.editions.v1.Shaped", "conf.editions.v1.Nested"


def key(name, message, inp, expect):
    return {"name": name, "kind": "biz_key", "message": message, "input": inp, "expect": expect}


def hashed(name, expect_bytes, **inp):
    c = {"name": name, "kind": "payload_hash", "message": SHAPED}
    c.update(inp)
    c["expect"] = {"payload_hash": h(expect_bytes)}
    return c


item = s(1, "sku-1") + vi(2, 3)
# id, count = 0 (explicit presence: encoded), plain = 0 (implicit: not),
# level = LEVEL_HIGH, packed [1, 2], expanded [3, 4], item as a group,
# boxed length-prefixed.
canonical = (s(1, "o1") + vi(2, 0) + vi(4, 2) + ld(5, varint(1) + varint(2)) + vi(6, 3) + vi(6, 4)
             + group(7, item) + ld(8, s(1, "b")))
changed = (s(1, "o1") + vi(2, 1) + vi(4, 2) + ld(5, varint(1) + varint(2)) + vi(6, 3) + vi(6, 4)
           + group(7, item) + ld(8, s(1, "b")))
without_count = (s(1, "o1") + vi(4, 2) + ld(5, varint(1) + varint(2)) + vi(6, 3) + vi(6, 4)
                 + group(7, item) + ld(8, s(1, "b")))
scrambled = (vi(99, 7) + ld(8, s(1, "b")) + group(7, item) + ld(6, varint(3) + varint(4)) + vi(5, 1) + vi(5, 2)
             + vi(4, 2) + vi(3, 0) + ld(100, b"zz") + vi(2, 0) + s(1, "o1"))

json_input = {"id": "o1", "count": 0, "plain": 0, "level": "LEVEL_HIGH", "packed": [1, 2], "expanded": [3, 4],
              "item": {"sku": "sku-1", "qty": 3}, "boxed": {"sku": "b"}}
json_no_count = {k: v for k, v in json_input.items() if k != "count"}

cases = [
    key("explicit-zero-renders", SHAPED, {"id": "o1", "count": 0, "level": "LEVEL_LOW"}, {"biz_key": "o1:0:LEVEL_LOW"}),
    key("explicit-set", SHAPED, {"id": "o1", "count": 7, "level": "LEVEL_HIGH"}, {"biz_key": "o1:7:LEVEL_HIGH"}),
    key("explicit-unset-fails", SHAPED, {"id": "o1", "level": "LEVEL_LOW"}, {"error": "EMPTY_FIELD"}),
    key("closed-enum-unset-fails", SHAPED, {"id": "o1", "count": 1}, {"error": "EMPTY_FIELD"}),
    key("empty-string-fails", SHAPED, {"id": "", "count": 1, "level": "LEVEL_LOW"}, {"error": "EMPTY_FIELD"}),
    key("implicit-field-not-in-key", SHAPED, {"id": "o1", "count": 2, "plain": 9, "level": "LEVEL_LOW"},
        {"biz_key": "o1:2:LEVEL_LOW"}),
    key("delimited-path", NESTED, {"item": {"sku": "a b", "qty": 0}}, {"biz_key": "a%20b/0"}),
    key("delimited-path-unset-leaf", NESTED, {"item": {"sku": "a"}}, {"error": "EMPTY_FIELD"}),
    key("delimited-path-unset-message", NESTED, {}, {"error": "EMPTY_FIELD"}),
    hashed("binary-canonical", canonical, input_binary=base64.b64encode(canonical).decode()),
    hashed("binary-scrambled", canonical, input_binary=base64.b64encode(scrambled).decode()),
    hashed("json", canonical, input=json_input),
    hashed("json-count-changed", changed, input=dict(json_input, count=1)),
    hashed("json-count-absent", without_count, input=json_no_count),
]
with open("editions.json", "w") as f:
    json.dump({"proto_root": "proto", "files": ["conf/editions/v1/editions.proto"], "cases": cases}, f, indent=1)
    f.write("\n")
