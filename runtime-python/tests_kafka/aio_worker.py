"""An AsyncConsumer process on KafkaSubscription for the SIGKILL test: applies PaySuccess events to a SQLite file.

Usage: aio_worker.py BROKERS NAMESPACE DB GEN_DIR N
Runs until the file holds N effects; then prints "worker: processed=P deduped=D", as worker.py does.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

from aiokafkahelp import Outcomes, effects, record_effect, sqlite_db
from conftest import pay_success_spec
from msgcontract_runtime.aio import AsyncConsumer
from msgcontract_runtime.aio.kafka import KafkaSubscription


async def main(brokers: str, ns: str, db_path: str, gen: str, n: int) -> None:
    sys.path.insert(0, gen)
    from shop.payment.v1 import payment_pb2  # type: ignore[import-not-found]

    spec = pay_success_spec(payment_pb2)
    db = await sqlite_db(db_path, size=8)

    async def handler(tx: Any, m: Any, env: Any) -> None:
        await record_effect(tx, m, env)
        await asyncio.sleep(0.01)  # a slow handler, so a kill lands mid-batch

    seen = Outcomes()
    sub = await KafkaSubscription.open(brokers, "recon", [spec], namespace=ns, partitions=2, commit_interval_s=2.0,
                                       session_timeout_ms=3000)
    stop = asyncio.Event()
    consumer = AsyncConsumer(spec, "recon.pay", handler, concurrency=8, observer=seen)
    task = asyncio.create_task(consumer.run(sub, db, stop))
    while effects(db_path)[0] < n and not task.done():
        await asyncio.sleep(0.05)
    stop.set()
    await task
    await sub.close()
    await db.close()
    print(f"worker: processed={seen['handled']} deduped={seen['deduplicated']}", flush=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])))
