"""Drives natsqueue.JetStreamQueue against runtime-go's natsjs (natsqueue_test.go).

Usage: natsqueue_interop.py URL GROUP TOPIC

Fetches the three envelopes the Go test published, with biz_keys "retry",
"defer" and "dead", and carries out one decision of each kind: a retry copy
(retry_count 1), a deferral by DELAY_MS, and a dead letter. Then it fetches
the two that come back (the retry copy and the deferred message), acks
them, and prints one JSON line for each; the Go side checks the lines, the
dead-letter record and the consumers' backlogs.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time

from natsqueue import Delivery, JetStreamQueue

import msgcontract_runtime as mc

DELAY_MS = 300


def now_ms() -> int:
    return int(time.time() * 1000)


async def fetch(q: JetStreamQueue, n: int, timeout_s: float = 20.0) -> list[Delivery]:
    """Fetches until n deliveries have arrived."""
    got: list[Delivery] = []
    deadline = time.monotonic() + timeout_s
    while len(got) < n:
        if time.monotonic() > deadline:
            raise SystemExit(f"got {len(got)} of {n} deliveries in {timeout_s}s")
        got += await q.fetch(n - len(got))
    return got


async def run(url: str, group: str, topic: str) -> None:
    q = await JetStreamQueue.connect(url, group, [topic])
    try:
        first = {mc.decode(d.body).biz_key: d for d in await fetch(q, 3)}
        start = now_ms()

        d = first["retry"]
        env = mc.decode(d.body)
        env.retry_count = 1
        env.not_before = start + DELAY_MS
        await q.settle(d, mc.Retry(env, DELAY_MS), "interop.handler", env)

        d = first["defer"]
        await q.settle(d, mc.Defer(start + DELAY_MS), "interop.handler", mc.decode(d.body))

        d = first["dead"]
        dead = mc.DeadLetter("non_retryable", 40901, "boom", 1)
        await q.settle(d, dead, "interop.handler", mc.decode(d.body))

        for d in await fetch(q, 2):
            env = mc.decode(d.body)
            line = {
                "subject": d.msg.subject,
                "topic": d.topic,
                "biz_key": env.biz_key,
                "retry_count": env.retry_count,
                "after_ms": now_ms() - start,
            }
            print(json.dumps(line), flush=True)
            await q.ack(d)
    finally:
        await q.close()


if __name__ == "__main__":
    asyncio.run(run(sys.argv[1], sys.argv[2], sys.argv[3]))
