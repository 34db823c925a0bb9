"""An AsyncConsumer on RabbitMQSubscription, for the SIGKILL test: applies PaySuccess events to a SQLite file
until it holds N effects, 8 handlers in flight.

Usage: aio_worker.py URL PREFIX DB GEN_DIR N HANG_FILE
With HANG_FILE not empty, the handler of order "o-hang" creates HANG_FILE and
sleeps inside its open transaction until the test kills the process.
Prints "worker: handled=H deduplicated=D" when it stops by itself.
"""

from __future__ import annotations

import asyncio
import pathlib
import sqlite3
import sys
from typing import Any

import msgcontract_runtime as mc
from conftest import pay_success_spec
from msgcontract_runtime.aio import AsyncConsumer
from msgcontract_runtime.aio.rabbitmq import RabbitMQSubscription
from msgcontract_runtime.aio.sqlite import SQLiteDatabase


def effects(path: str) -> int:
    conn = sqlite3.connect(path, timeout=30)
    try:
        return int(conn.execute("SELECT count(*) FROM effects").fetchone()[0])
    finally:
        conn.close()


async def main() -> None:
    url, prefix, db_path, gen, n, hang = sys.argv[1:7]
    sys.path.insert(0, gen)
    from shop.payment.v1 import payment_pb2  # type: ignore[import-not-found]

    spec = pay_success_spec(payment_pb2)
    counts: dict[str, int] = {}

    def observe(o: mc.Outcome) -> None:
        if o.label is not None:
            counts[o.label] = counts.get(o.label, 0) + 1

    async def handler(tx: Any, m: Any, env: Any) -> None:
        await tx.execute("INSERT INTO effects (biz_key, order_id) VALUES (?, ?)", (env.biz_key, m.order_id))
        if hang and m.order_id == "o-hang":
            pathlib.Path(hang).touch()
            await asyncio.sleep(600)
        await asyncio.sleep(0.01)

    db = await SQLiteDatabase.open(db_path, 4)
    sub = await RabbitMQSubscription.open(url, "recon", [spec], prefix=prefix, prefetch=8)
    stop = asyncio.Event()
    c = AsyncConsumer(spec, "recon.pay", handler, concurrency=8, observer=observe)
    task = asyncio.create_task(c.run(sub, db, stop))
    while effects(db_path) < int(n):
        await asyncio.sleep(0.05)
    stop.set()
    await task
    await sub.close()
    await db.close()
    print(f"worker: handled={counts.get('handled', 0)} deduplicated={counts.get('deduplicated', 0)}", flush=True)


if __name__ == "__main__":
    asyncio.run(main())
