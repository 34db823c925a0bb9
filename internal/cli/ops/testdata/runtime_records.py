"""Builds records with msgcontract's Python runtime, as a Python producer would.

Run by internal/cli/ops TestConfluentRuleExecution with the Python runtime
(.venv, runtime-python/src first on PYTHONPATH) and a directory holding the
contract's protoc classes and its msgcontract module:

    runtime_records.py IN.json OUT.json

IN.json is {"groups": [{"pb_module", "contract_module", "message", "spec",
"records": [{"json": payload in proto JSON}, ...]}, ...]}. For each record
OUT.json has {"verdict": "pass" when msgcontract_runtime.new_envelope wraps
it, "fail" when it refuses it with a BizKeyError, "code": its code,
"payload": the base64 payload bytes: the envelope's, or for a refused
record the message's deterministic encoding, what the envelope would have
carried}.
"""
import base64
import importlib
import json
import sys

from google.protobuf import json_format

import msgcontract_runtime as mc


def main():
    src, dst = sys.argv[1:3]
    with open(src) as f:
        spec = json.load(f)
    out = []
    for g in spec["groups"]:
        cls = getattr(importlib.import_module(g["pb_module"]), g["message"])
        contract = getattr(importlib.import_module(g["contract_module"]), g["spec"])
        records = []
        for r in g["records"]:
            m = json_format.ParseDict(r["json"], cls(), ignore_unknown_fields=False)
            try:
                env = mc.new_envelope(contract, m)
            except mc.BizKeyError as e:
                records.append({"verdict": "fail", "code": e.code,
                                "payload": base64.b64encode(m.SerializeToString(deterministic=True)).decode()})
                continue
            if env.content_type != mc.CONTENT_TYPE_PROTO:
                raise SystemExit("not a binary payload: %s" % env.content_type)
            records.append({"verdict": "pass", "code": "", "payload": base64.b64encode(env.payload).decode()})
        out.append({"records": records})
    with open(dst, "w") as f:
        json.dump({"groups": out}, f)


if __name__ == "__main__":
    main()
