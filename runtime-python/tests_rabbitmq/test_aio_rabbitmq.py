"""AsyncConsumer on RabbitMQSubscription (aio-pika) on a real node: effect once, retry then success, a dead
letter the sync store reads, and declarations compatible with the sync (pika) member in both orders."""

from __future__ import annotations

import asyncio
import pathlib
import sqlite3
from typing import Any

import msgcontract_runtime as mc
from conftest import pay_success_spec, url
from msgcontract_runtime import rabbitmq as mr
from msgcontract_runtime.aio import AsyncConsumer, rabbitmq as ar
from msgcontract_runtime.aio.sqlite import SQLiteDatabase, connect
from rmqhelp import pay

TIMEOUT_S = 60.0


async def sqlite_db(path: str) -> SQLiteDatabase:
    c = await connect(path)
    await c.execute("CREATE TABLE IF NOT EXISTS effects (biz_key TEXT NOT NULL, order_id TEXT NOT NULL)")
    await c.close()
    return await SQLiteDatabase.open(path, 4)


def effects(path: str) -> tuple[int, int]:
    conn = sqlite3.connect(path, timeout=30)
    try:
        n, d = conn.execute("SELECT count(*), count(DISTINCT biz_key) FROM effects").fetchone()
        return int(n), int(d)
    finally:
        conn.close()


async def record_effect(tx: Any, m: Any, env: Any) -> None:
    await tx.execute("INSERT INTO effects (biz_key, order_id) VALUES (?, ?)", (env.biz_key, m.order_id))


class Counts:
    def __init__(self) -> None:
        self.labels: dict[str, int] = {}

    def __call__(self, o: mc.Outcome) -> None:
        if o.label is not None:
            self.labels[o.label] = self.labels.get(o.label, 0) + 1

    def __getitem__(self, k: str) -> int:
        return self.labels.get(k, 0)


async def consume_until(c: AsyncConsumer[Any], sub: ar.RabbitMQSubscription, db: Any, cond: Any, what: str) -> None:
    stop = asyncio.Event()
    task = asyncio.create_task(c.run(sub, db, stop))
    try:
        end = asyncio.get_running_loop().time() + TIMEOUT_S
        while not cond():
            if task.done():
                task.result()
                raise AssertionError(f"the consumer stopped before: {what}")
            if asyncio.get_running_loop().time() > end:
                raise AssertionError(f"not reached within {TIMEOUT_S}s: {what}")
            await asyncio.sleep(0.02)
        stop.set()
        await task
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await sub.close()


def test_aio_duplicates_and_retry(tmp_path: pathlib.Path, pb: Any, prefix: str) -> None:
    """20 events published twice and one failing twice (retryable) before it succeeds: 21 effects once each,
    the retries through the delay queues."""
    spec = pay_success_spec(pb, base_ms=50)
    path = str(tmp_path / "biz.db")
    seen = Counts()
    calls: dict[str, int] = {}

    async def handler(tx: Any, m: Any, env: Any) -> None:
        calls[m.order_id] = calls.get(m.order_id, 0) + 1
        await record_effect(tx, m, env)
        if m.order_id == "flaky" and calls["flaky"] <= 2:
            raise mc.RetryableError(50301, "system", "ledger answered 503")

    async def main() -> None:
        db = await sqlite_db(path)
        sub = await ar.RabbitMQSubscription.open(url(), "recon", [spec], prefix=prefix, prefetch=8)
        conn = await ar.AsyncConnection.open(mr.Config(url(), prefix=prefix))
        for i in range(20):
            env = pay(spec, pb, f"o-{i}")
            await ar.publish(conn, spec.topic, env)
            await ar.publish(conn, spec.topic, env)
        await ar.publish(conn, spec.topic, pay(spec, pb, "flaky"))
        await conn.close()
        c = AsyncConsumer(spec, "recon.pay", handler, concurrency=8, observer=seen)
        await consume_until(c, sub, db, lambda: seen["handled"] == 21 and seen["deduplicated"] == 20,
                            "21 handled, 20 deduplicated")
        await db.close()

    asyncio.run(asyncio.wait_for(main(), TIMEOUT_S + 30))
    assert calls["flaky"] == 3 and seen["retry_scheduled"] == 2, (calls, seen.labels)
    assert effects(path) == (21, 21)


def test_aio_dead_letter_read_by_the_store(tmp_path: pathlib.Path, pb: Any, prefix: str) -> None:
    spec = pay_success_spec(pb)
    path = str(tmp_path / "biz.db")
    seen = Counts()

    async def handler(tx: Any, m: Any, env: Any) -> None:
        raise mc.NonRetryableError(40001, "business", "order refused")

    async def main() -> None:
        db = await sqlite_db(path)
        sub = await ar.RabbitMQSubscription.open(url(), "recon", [spec], prefix=prefix)
        conn = await ar.AsyncConnection.open(mr.Config(url(), prefix=prefix))
        await ar.publish(conn, spec.topic, pay(spec, pb, "refused"))
        await conn.close()
        c = AsyncConsumer(spec, "recon.pay", handler, observer=seen)
        await consume_until(c, sub, db, lambda: seen["dead_lettered"] == 1, "the dead letter")
        await db.close()

    asyncio.run(asyncio.wait_for(main(), TIMEOUT_S + 30))
    store = mr.DeadLetters(url(), prefix=prefix)
    [r] = store.list()
    store.close()
    assert (r["reason"], r["group"], r["topic"], r["handler"], r["code"], r["biz_key"]) == (
        "non_retryable", "recon", "order-event", "recon.pay", 40001, "order_id:refused:PAY_SUCCESS")


def test_aio_and_sync_declarations_agree(prefix: str, spec: Any) -> None:
    """aio-pika declares first, pika redeclares (and the reverse on another prefix): no 406, so the delay
    queues' x-message-ttl is the same AMQP type from both clients."""

    async def declare(p: str) -> None:
        c = await ar.AsyncConnection.open(mr.Config(url(), prefix=p))
        await c.declare_member("g", ["order-event"])
        await c.close()

    asyncio.run(declare(prefix))
    s = mr.Connection(mr.Config(url(), prefix=prefix))
    s.declare_member("g", ["order-event"])
    s.declare_delay("g", 31)
    s.close()
    other = prefix + "-b"
    s = mr.Connection(mr.Config(url(), prefix=other))
    s.declare_member("g", ["order-event"])
    s.declare_delay("g", 31)
    s.close()

    async def redeclare() -> None:
        c = await ar.AsyncConnection.open(mr.Config(url(), prefix=other))
        await c.declare_member("g", ["order-event"])
        await c.declare_delay("g", 31)
        await c.close()

    asyncio.run(redeclare())
