"""The Python conformance executor.

Reads a JSON array of cases on standard input, runs each through the
generated contract modules named on the command line, and prints a JSON
array of results, one per case, on standard output.
"""

from __future__ import annotations

import base64
import importlib
import json
import sys
from typing import Any

import msgcontract_runtime as support
from msgcontract_runtime import payload_hash


def load(modules: list[str]) -> tuple[dict[str, support.EventContract[Any]], dict[str, support.StateMachine]]:
    """The events and state machines of the generated modules, by full proto name."""
    events: dict[str, support.EventContract[Any]] = {}
    machines: dict[str, support.StateMachine] = {}
    for name in modules:
        mod = importlib.import_module(name)
        events.update(mod.EVENTS)
        machines.update(mod.STATE_MACHINES)
    return events, machines


def main(modules: list[str]) -> None:
    events, machines = load(modules)
    cases = json.load(sys.stdin)
    results = []
    for c in cases:
        try:
            results.append(run(c, events, machines))
        except Exception as e:  # report, never stop: one broken case must not hide the rest
            results.append({"error": f"EXCEPTION: {type(e).__name__}: {e}"})
    json.dump(results, sys.stdout)
    sys.stdout.write("\n")


def run(
    c: dict[str, Any],
    events: dict[str, support.EventContract[Any]],
    machines: dict[str, support.StateMachine],
) -> dict[str, Any]:
    kind = c["kind"]
    if kind == "transition":
        sm = machines.get(c["enum"])
        if sm is None:
            return {"error": "UNKNOWN_ENUM"}
        return {"result": sm.can_transit(c.get("from", ""), c.get("to", "")).value}
    spec = events.get(c["message"])
    if spec is None:
        return {"error": "UNKNOWN_MESSAGE"}
    if kind == "biz_key":
        try:
            msg = spec.parse_json(json.dumps(c.get("input", {})))
            return {"biz_key": spec.biz_key(msg)}
        except support.BizKeyError as e:
            return {"error": e.code}
        except support.DecodeError as e:
            return {"error": f"DECODE: {e}"}
    if kind == "payload_hash":
        try:
            if "input_binary" in c:
                msg = spec.parse_binary(base64.b64decode(c["input_binary"]))
            else:
                msg = spec.parse_json(json.dumps(c.get("input", {})))
        except support.DecodeError:
            return {"error": "INVALID_INPUT"}
        return {"payload_hash": payload_hash.of(msg)}
    if kind == "classify":
        cl = spec.rules.classify(int(c["code"])) if "code" in c else spec.rules.no_code()
        return {"retryable": cl.retryable, "range": cl.range_name}
    if kind == "backoff":
        n = int(c.get("retry", 0))
        u = float(c.get("u", 0.0))
        if spec.retry.dead_letter(n):
            return {"dead_letter": True}
        return {"dead_letter": False, "delay_ms": spec.retry.delay_ms(n, u)}
    return {"error": "UNKNOWN_KIND"}


if __name__ == "__main__":
    main(sys.argv[1:])
