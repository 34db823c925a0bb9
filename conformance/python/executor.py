"""The Python conformance executor.

Reads a JSON array of cases on standard input, runs each through the
generated contract modules named on the command line, and prints a JSON
array of results, one per case, on standard output.
"""

from __future__ import annotations

import base64
import importlib
import json
import sqlite3
import sys
from typing import Any

import msgcontract_runtime as support
from msgcontract.v1 import envelope_pb2
from msgcontract_runtime import dedup, payload_hash, txcheck
from msgcontract_runtime.consumer import begin


def load(modules: list[str]) -> tuple[dict[str, support.EventSpec[Any]], dict[str, support.StateMachine]]:
    """The events and state machines of the generated modules, by full proto name."""
    events: dict[str, support.EventSpec[Any]] = {}
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
    for n, c in enumerate(cases):
        try:
            if c["kind"] in ("decision", "handler_calls") and c.get("message") in events:
                spec = events[c["message"]]
                results.append(decision(c, spec, n) if c["kind"] == "decision" else handler_calls(c, spec, n))
                continue
            results.append(run(c, events, machines))
        except Exception as e:  # report, never stop: one broken case must not hide the rest
            results.append({"error": f"EXCEPTION: {type(e).__name__}: {e}"})
    json.dump(results, sys.stdout)
    sys.stdout.write("\n")


def run(
    c: dict[str, Any],
    events: dict[str, support.EventSpec[Any]],
    machines: dict[str, support.StateMachine],
) -> dict[str, Any]:
    kind = c["kind"]
    if kind == "txcheck":
        return tx_check(c)
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


def tx_check(c: dict[str, Any]) -> dict[str, Any]:
    """Answers c's check-back with txcheck.check on an in-memory SQLite database that txcheck.migrate created,
    where c's rows were recorded (txcheck.record) and committed first, and computes txcheck.deadline."""
    conn = sqlite3.connect(":memory:")
    try:
        txcheck.migrate(conn)
        message_id = str(c.get("message_id", ""))
        stored, now, unresolved = int(c["stored_ms"]), int(c["now_ms"]), int(c["unresolved_ms"])
        ids = [str(i) for i in c.get("other_recorded", [])]
        if c.get("recorded", False):
            ids.append(message_id)
        for i in ids:
            txcheck.record(conn, i, "conformance", stored)
            conn.commit()
        answer = txcheck.check(conn, message_id, stored, now, unresolved)
        return {"answer": answer.value, "deadline_ms": txcheck.deadline(stored, unresolved)}
    finally:
        conn.close()


def failure(c: dict[str, Any]) -> Exception:
    """The error a failing handler of case c raises: c's code, or none."""
    if "code" in c:
        return support.ContractError(int(c["code"]), "", "conformance")
    return RuntimeError("conformance")


def bare(spec: support.EventSpec[Any], biz_key: str) -> envelope_pb2.Envelope:
    """An envelope of spec's event with an empty payload under biz_key."""
    return envelope_pb2.Envelope(
        message_id=support.new_message_id(), biz_key=biz_key, event_type=spec.event_type, topic=spec.topic,
        payload=spec.message_type().SerializeToString(),
    )


def decision_result(d: support.Decision) -> dict[str, Any]:
    """A decision as the vectors spell it."""
    if isinstance(d, support.Ack):
        return {"decision": "ack", "deduplicated": d.deduplicated}
    if isinstance(d, support.Retry):
        return {"decision": "retry", "retry_count": d.next_envelope.retry_count, "delay_ms": d.delay_ms}
    if isinstance(d, support.DeadLetter):
        return {"decision": "dead_letter", "reason": d.reason, "code": d.code, "attempts": d.attempts}
    return {"decision": "defer"}


def decision(c: dict[str, Any], spec: support.EventSpec[Any], n: int) -> dict[str, Any]:
    """Runs c's outcome through Consumer.process, whose decisions are consumer.admit and consumer.failed, on an
    in-memory SQLite database: a duplicate or a conflict meets a committed claim of the key (same payload hash,
    another one), an error is the handler raising c's code, and a chain row is advanced to before the delivery
    arrives, as the transport's delivery id drop_superseded looks up first."""
    conn = sqlite3.connect(":memory:")
    try:
        dedup.migrate(conn)
        handler_name = f"case-{n}"
        env = bare(spec, f"decision:{n}")
        env.retry_count = int(c.get("retry_count", 0))
        env.replay_count = int(c.get("replay_count", 0))
        outcome = c["outcome"]
        if outcome in ("duplicate", "conflict"):
            h = payload_hash.of(spec.parse_binary(env.payload)) if outcome == "duplicate" else "0" * 64
            dedup.claim(conn, env.biz_key, handler_name, "prior", h, 1)
            conn.commit()
        if "chain" in c:
            ch = c["chain"]
            ok, _ = dedup.advance(conn, dedup.ChainStep(handler_name, env.message_id, dedup.ChainPos(
                int(ch["replay_count"]), int(ch["attempt"]), str(ch["delivery_id"])), 1))
            assert ok
        err = failure(c) if outcome == "error" else None

        def handler(tx: Any, m: Any, e: envelope_pb2.Envelope) -> None:
            if err is not None:
                raise err

        u = float(c.get("u", 0.0))
        consumer = support.Consumer(spec, handler_name, handler, clock_ms=lambda: 1_000_000, rand=lambda: u)
        body = support.encode(env)
        delivery_id: str | None = c.get("delivery_id")
        if delivery_id is not None and consumer.drop_superseded(conn, body, delivery_id):
            return decision_result(support.Ack(deduplicated=True))
        return decision_result(consumer.process(conn, body, delivery_id))
    finally:
        conn.close()


def handler_calls(c: dict[str, Any], spec: support.EventSpec[Any], n: int) -> dict[str, Any]:
    """Runs c's batch through Consumer.process_shared, one shared transaction per round, as a transport hands
    the consumer a fetch; the retries of a round are the next round's batch. Counts each member's handler runs."""
    conn = sqlite3.connect(":memory:")
    try:
        dedup.migrate(conn)
        conn.execute("CREATE TABLE effects (biz_key TEXT NOT NULL)")
        conn.commit()
        batch: list[str] = c["batch"]
        calls = [0] * len(batch)
        member: dict[str, int] = {}
        err = failure(c)

        def handler(tx: Any, m: Any, e: envelope_pb2.Envelope) -> None:
            i = member[e.biz_key]
            calls[i] += 1
            tx.execute("INSERT INTO effects (biz_key) VALUES (?)", (e.biz_key,))
            if batch[i] == "fail" and e.retry_count == 0:
                raise err

        now = [1_000_000]
        consumer = support.Consumer(spec, f"calls-{n}", handler, clock_ms=lambda: now[0], rand=lambda: 0.0)
        bodies = []
        for i in range(len(batch)):
            env = bare(spec, f"calls:{n}:{i}")
            member[env.biz_key] = i
            bodies.append(support.encode(env))
        for _ in range(10):
            if not bodies:
                return {"handler_calls": calls}
            begin(conn)
            pending = [consumer.process_shared(conn, b) for b in bodies]
            conn.commit()
            bodies = []
            for p in pending:
                p.committed()
                if isinstance(p.decision, support.Retry):
                    bodies.append(support.encode(p.decision.next_envelope))
                    now[0] = max(now[0], p.decision.next_envelope.not_before)
                elif isinstance(p.decision, support.Defer):
                    return {"error": f"DEFERRED: {p.decision}"}
        return {"error": "RETRIES_NEVER_END"}
    finally:
        conn.close()


if __name__ == "__main__":
    main(sys.argv[1:])
