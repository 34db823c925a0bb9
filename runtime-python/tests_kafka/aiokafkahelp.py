"""Helpers of the asyncio Kafka tests: a timeout, the business database, an outcome counter."""

from __future__ import annotations

import asyncio
import collections
import sqlite3
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from msgcontract.v1 import envelope_pb2
from msgcontract_runtime.aio.sqlite import SQLiteDatabase, connect
from msgcontract_runtime.consumer import Outcome

T = TypeVar("T")

TIMEOUT_S = 180.0
"""One test's limit: past it the test fails with every task's stack instead of hanging."""


def run(main: Callable[[], Awaitable[T]], timeout_s: float = TIMEOUT_S) -> T:
    async def guarded() -> T:
        task = asyncio.ensure_future(main())
        done, _ = await asyncio.wait({task}, timeout=timeout_s)
        if not done:
            stacks = "".join(f"--- {t!r}\n" for t in asyncio.all_tasks())
            task.cancel()
            await asyncio.wait({task}, timeout=5)
            raise AssertionError(f"asyncio test timed out after {timeout_s:.0f}s; tasks:\n{stacks}")
        return task.result()

    return asyncio.run(guarded())


CREATE_EFFECTS = "CREATE TABLE IF NOT EXISTS effects (biz_key TEXT NOT NULL, order_id TEXT NOT NULL)"


async def sqlite_db(path: str, size: int = 4) -> SQLiteDatabase:
    """The business database on aiosqlite, with the effects table kafkahelp.effects counts."""
    c = await connect(path)
    await c.execute(CREATE_EFFECTS)
    await c.close()
    return await SQLiteDatabase.open(path, size)


def effects(path: str) -> tuple[int, int]:
    """(effects, distinct biz_keys) in the SQLite file at path, read outside any writer."""
    conn = sqlite3.connect(path, timeout=30)
    try:
        n, d = conn.execute("SELECT count(*), count(DISTINCT biz_key) FROM effects").fetchone()
        return int(n), int(d)
    finally:
        conn.close()


async def record_effect(tx: Any, m: Any, env: envelope_pb2.Envelope) -> None:
    """The business write in the consumer's transaction, on aiosqlite or asyncpg."""
    if hasattr(tx, "fetchrow"):  # asyncpg
        await tx.execute("INSERT INTO effects (biz_key, order_id) VALUES ($1, $2)", env.biz_key, m.order_id)
    else:
        await tx.execute("INSERT INTO effects (biz_key, order_id) VALUES (?, ?)", (env.biz_key, m.order_id))


class Outcomes:
    """An observer counting outcome labels; what a test waits on."""

    def __init__(self) -> None:
        self.counts: Counter[str] = collections.Counter()

    def __call__(self, o: Outcome) -> None:
        if o.label is not None:
            self.counts[o.label] += 1

    def __getitem__(self, label: str) -> int:
        return self.counts[label]


async def until(
    cond: Callable[[], bool], what: str, limit_s: float = 120, task: asyncio.Task[Any] | None = None
) -> None:
    """Waits for cond; fails naming what after limit_s, or at once when task ended."""
    end = time.monotonic() + limit_s
    while not cond():
        if task is not None and task.done():
            task.result()
            raise AssertionError(f"the consumer stopped before: {what}")
        if time.monotonic() > end:
            raise AssertionError(f"not reached within {limit_s}s: {what}")
        await asyncio.sleep(0.02)
