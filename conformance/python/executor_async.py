"""The Python conformance executor through the asyncio consumer (python-async).

Reads the same JSON cases as executor.py and answers them by running
messages through an AsyncConsumer that each generated module's
register_<event>_handler_async created, on an in-memory aiosqlite database:

- biz_key: the key the consumer claimed for the envelope new_envelope built;
- payload_hash: the hash the consumer stored with its claim (an input that
  does not decode is dead-lettered: INVALID_INPUT);
- classify: the decision after a handler raised the code (or an uncoded
  error): retried or dead-lettered, and the range it names;
- backoff: the decision after a retryable failure of retry n with the
  uniform sample u: its delay, or dead-lettering;
- decision: the decision on an envelope whose claim meets a committed one
  (duplicate, conflict), whose handler raises (error) or succeeds (ok),
  with its retry chain's row advanced to beforehand;
- handler_calls: a batch processed concurrently (one transaction per
  delivery, as AsyncConsumer.run has them), its retries the next round's
  batch, counting each member's handler runs;
- transition: as executor.py (no consumer is involved);
- txcheck: as executor.py, the synchronous txcheck on sqlite3: the
  check-back rule is one function over a DB-API connection, and
  msgcontract_runtime.aio has no RocketMQ transport, hence no txcheck of
  its own.
"""

from __future__ import annotations

import asyncio
import base64
import importlib
import json
import sys
from collections.abc import Callable
from typing import Any

import msgcontract_conformance_executor as sync

import msgcontract_runtime as support
from msgcontract.v1 import envelope_pb2
from msgcontract_runtime import payload_hash
from msgcontract_runtime.aio import AsyncConsumer, Registry, advance
from msgcontract_runtime.aio.sqlite import SQLiteDatabase
from msgcontract_runtime.dedup import ChainPos, ChainStep

Raise = Callable[[], None]


def registrars(modules: list[str]) -> dict[str, Callable[..., AsyncConsumer[Any]]]:
    """Every generated register_*_handler_async, by the full name of the event it registers."""
    out: dict[str, Callable[..., AsyncConsumer[Any]]] = {}
    for name in modules:
        mod = importlib.import_module(name)
        for attr in dir(mod):
            if attr.startswith("register_") and attr.endswith("_handler_async"):
                fn = getattr(mod, attr)
                out[fn(Registry(), "probe", _noop).spec.full_name] = fn
    return out


async def _noop(tx: Any, m: Any, env: envelope_pb2.Envelope) -> None:
    pass


class Runner:
    def __init__(self, db: SQLiteDatabase, registrars: dict[str, Callable[..., AsyncConsumer[Any]]]) -> None:
        self.db = db
        self.registrars = registrars
        self.n = 0

    async def process(
        self, spec: support.EventSpec[Any], env: envelope_pb2.Envelope, fail: BaseException | None, u: float = 0.0
    ) -> tuple[support.Decision, str]:
        """Runs env through a fresh consumer of spec's event; returns the decision and the handler name."""
        self.n += 1
        handler_name = f"case-{self.n}"

        async def handler(tx: Any, m: Any, e: envelope_pb2.Envelope) -> None:
            if fail is not None:
                raise fail

        c = self.registrars[spec.full_name](Registry(), handler_name, handler)
        c.clock_ms = lambda: 1_000_000
        c.rand = lambda: u
        return await c.process(self.db, support.encode(env)), handler_name

    async def claimed(self, handler_name: str) -> tuple[str, str]:
        tx = await self.db.begin()
        try:
            async with tx.conn.execute(
                "SELECT biz_key, payload_hash FROM msg_dedup WHERE handler = ?", (handler_name,)
            ) as cur:
                row = await cur.fetchone()
        finally:
            await tx.close()
        if row is None:
            raise AssertionError(f"{handler_name}: no claim")
        return str(row[0]), str(row[1])

    async def run(self, c: dict[str, Any], events: dict[str, support.EventSpec[Any]],
                  machines: dict[str, support.StateMachine]) -> dict[str, Any]:
        kind = c["kind"]
        spec = events.get(c.get("message", ""))
        if kind not in ("biz_key", "payload_hash", "classify", "backoff", "decision", "handler_calls") or spec is None:
            return sync.run(c, events, machines)
        if kind == "decision":
            return await self.decision(c, spec)
        if kind == "handler_calls":
            return await self.handler_calls(c, spec)
        if kind == "biz_key":
            try:
                msg = spec.parse_json(json.dumps(c.get("input", {})))
                env = support.new_envelope(spec, msg, occurred_at_ms=1)
            except support.BizKeyError as e:
                return {"error": e.code}
            except support.DecodeError as e:
                return {"error": f"DECODE: {e}"}
            decision, h = await self.process(spec, env, None)
            assert decision == support.Ack(), decision
            return {"biz_key": (await self.claimed(h))[0]}
        if kind == "payload_hash":
            env = _bare(spec)
            if "input_binary" in c:
                env.payload = base64.b64decode(c["input_binary"])
            else:
                env.content_type = support.CONTENT_TYPE_JSON
                env.payload = json.dumps(c.get("input", {})).encode()
            decision, h = await self.process(spec, env, None)
            if isinstance(decision, support.DeadLetter) and decision.reason == "decode":
                return {"error": "INVALID_INPUT"}
            assert decision == support.Ack(), decision
            return {"payload_hash": (await self.claimed(h))[1]}
        if kind == "classify":
            err: BaseException = (
                support.ContractError(int(c["code"]), "", "conformance") if "code" in c else RuntimeError("conformance")
            )
            decision, _ = await self.process(spec, _bare(spec), err)
            if isinstance(decision, support.Retry):
                le = decision.next_envelope.last_error
                return {"retryable": le.retryable, "range": le.range}
            assert isinstance(decision, support.DeadLetter), decision
            return {"retryable": decision.reason == "retries_exhausted", "range": decision.range_name}
        n = int(c.get("retry", 0))
        retryable = _retryable(spec)
        if n < 1 or retryable is None:  # no failure the consumer retries: the policy alone answers
            return sync.run(c, events, machines)
        env = _bare(spec)
        env.retry_count = n - 1
        decision, _ = await self.process(spec, env, retryable, float(c.get("u", 0.0)))
        if isinstance(decision, support.Retry):
            return {"dead_letter": False, "delay_ms": decision.delay_ms}
        assert isinstance(decision, support.DeadLetter) and decision.reason == "retries_exhausted", decision
        return {"dead_letter": True}


    async def decision(self, c: dict[str, Any], spec: support.EventSpec[Any]) -> dict[str, Any]:
        """c's outcome through AsyncConsumer.process (see the module comment)."""
        self.n += 1
        handler_name = f"decision-{self.n}"
        env = _bare(spec)
        env.retry_count = int(c.get("retry_count", 0))
        env.replay_count = int(c.get("replay_count", 0))
        outcome = c["outcome"]
        if outcome in ("duplicate", "conflict"):
            h = payload_hash.of(spec.parse_binary(env.payload)) if outcome == "duplicate" else "0" * 64
            tx = await self.db.begin()
            try:
                assert await tx.claim(env.biz_key, handler_name, "prior", h, 1)
                await tx.commit()
            finally:
                await tx.close()
        if "chain" in c:
            ch = c["chain"]
            ok, _ = await advance(self.db, ChainStep(handler_name, env.message_id, ChainPos(
                int(ch["replay_count"]), int(ch["attempt"]), str(ch["delivery_id"])), 1))
            assert ok
        err = sync.failure(c) if outcome == "error" else None

        async def handler(tx: Any, m: Any, e: envelope_pb2.Envelope) -> None:
            if err is not None:
                raise err

        u = float(c.get("u", 0.0))
        consumer = self.registrars[spec.full_name](Registry(), handler_name, handler)
        consumer.clock_ms = lambda: 1_000_000
        consumer.rand = lambda: u
        return sync.decision_result(await consumer.process(self.db, support.encode(env), c.get("delivery_id")))

    async def handler_calls(self, c: dict[str, Any], spec: support.EventSpec[Any]) -> dict[str, Any]:
        """c's batch through AsyncConsumer.process, concurrently (see the module comment)."""
        self.n += 1
        batch: list[str] = c["batch"]
        calls = [0] * len(batch)
        member: dict[str, int] = {}
        err = sync.failure(c)

        async def handler(tx: Any, m: Any, e: envelope_pb2.Envelope) -> None:
            i = member[e.biz_key]
            calls[i] += 1
            if batch[i] == "fail" and e.retry_count == 0:
                raise err

        now = [1_000_000]
        consumer = self.registrars[spec.full_name](Registry(), f"calls-{self.n}", handler)
        consumer.clock_ms = lambda: now[0]
        consumer.rand = lambda: 0.0
        bodies = []
        for i in range(len(batch)):
            env = sync.bare(spec, f"calls:{self.n}:{i}")
            member[env.biz_key] = i
            bodies.append(support.encode(env))
        for _ in range(10):
            if not bodies:
                return {"handler_calls": calls}
            decisions = await asyncio.gather(*(consumer.process(self.db, b) for b in bodies))
            bodies = []
            for d in decisions:
                if isinstance(d, support.Retry):
                    bodies.append(support.encode(d.next_envelope))
                    now[0] = max(now[0], d.next_envelope.not_before)
                elif isinstance(d, support.Defer):
                    return {"error": f"DEFERRED: {d}"}
        return {"error": "RETRIES_NEVER_END"}


def _bare(spec: support.EventSpec[Any]) -> envelope_pb2.Envelope:
    return envelope_pb2.Envelope(
        message_id=support.new_message_id(), biz_key="conformance", event_type=spec.event_type,
        payload=spec.message_type().SerializeToString(),
    )


def _retryable(spec: support.EventSpec[Any]) -> BaseException | None:
    """An error spec's rules retry, or None when they retry none."""
    if spec.rules.unclassified_retryable:
        return RuntimeError("conformance")
    for r in spec.rules.ranges:
        if r.retryable:
            return support.ContractError(r.start, r.name, "conformance")
    return None


async def amain(modules: list[str]) -> None:
    events, machines = sync.load(modules)
    cases = json.load(sys.stdin)
    db = await SQLiteDatabase.open(":memory:", 1)
    runner = Runner(db, registrars(modules))
    results = []
    try:
        for c in cases:
            try:
                results.append(await runner.run(c, events, machines))
            except Exception as e:  # report, never stop: one broken case must not hide the rest
                results.append({"error": f"EXCEPTION: {type(e).__name__}: {e}"})
    finally:
        await db.close()
    json.dump(results, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    asyncio.run(amain(sys.argv[1:]))
