"""A consumer process for test_aio's SIGKILL test: aio_worker.py QUEUE KIND WHERE CONCURRENCY.

Consumes the "errors" topic as group "g" with short leases; every handler
applies its message, then waits a little inside its transaction, so a kill
lands with transactions open.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

from aio_support import SPEC, apply, open_db
from msgcontract.v1 import envelope_pb2
from msgcontract_runtime.aio import AsyncConsumer
from msgcontract_runtime.aio.sqlite import SQLiteQueue


async def slow_apply(tx: Any, m: envelope_pb2.LastError, env: envelope_pb2.Envelope) -> None:
    await apply(tx, m, env)
    await asyncio.sleep(0.02)


async def main(queue: str, kind: str, where: str, concurrency: int) -> None:
    q = await SQLiteQueue.open(queue, lease_ms=1000)
    sub = await q.subscribe("g", [SPEC.topic])
    db = await open_db(kind, where, size=concurrency, fresh=False)
    print("ready", flush=True)
    await AsyncConsumer(SPEC, "h", slow_apply, concurrency=concurrency).run(sub, db)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])))
