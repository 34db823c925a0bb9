"""make bench-python-async: the asyncio consumer against the synchronous one, msg/s side by side.

For SQLite and PostgreSQL (MSGCONTRACT_PG_DSN) at 1 and 32 concurrent
handlers, N messages each go through the consumer's whole path: decode,
claim in the business transaction, a handler that INSERTs one row, commit.
The synchronous Consumer runs in that many threads (sqlite3 / psycopg, one
connection each); AsyncConsumer runs that many tasks on one event loop
(aiosqlite / asyncpg, a pool of that many connections). The transport is left
out: both consume the same pre-encoded bodies from memory.

    python bench_async.py [-n 2000] [--concurrency 1,32] [--db sqlite,postgres]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import queue
import sqlite3
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from typing import Any

import msgcontract_runtime as mc
from msgcontract.v1 import envelope_pb2
from msgcontract_runtime.aio import AsyncConsumer, AsyncDatabase
from msgcontract_runtime.aio.postgres import PostgresDatabase
from msgcontract_runtime.aio.sqlite import SQLiteDatabase

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
from aio_support import SPEC  # noqa: E402  (the tests' event; its topic and policy do not matter here)

APPLIED = "CREATE TABLE IF NOT EXISTS bench_applied (biz_key TEXT NOT NULL, message_id TEXT NOT NULL)"


def bodies(n: int, run: str) -> list[bytes]:
    return [
        mc.encode(mc.new_envelope(SPEC, envelope_pb2.LastError(range=f"{run}-{i}"), occurred_at_ms=1))
        for i in range(n)
    ]


def sync_rate(connect: Callable[[], Any], paramstyle: str, threads: int, work: list[bytes]) -> float:
    p = "?" if paramstyle == "qmark" else "%s"
    insert = f"INSERT INTO bench_applied (biz_key, message_id) VALUES ({p}, {p})"

    def handler(tx: Any, m: envelope_pb2.LastError, env: envelope_pb2.Envelope) -> None:
        tx.cursor().execute(insert, (env.biz_key, env.message_id))

    q: queue.SimpleQueue[bytes] = queue.SimpleQueue()
    for b in work:
        q.put(b)
    conns = [connect() for _ in range(threads)]
    errors: list[BaseException] = []

    def worker(conn: Any) -> None:
        c = mc.Consumer(SPEC, "bench", handler, paramstyle=paramstyle)
        try:
            while True:
                try:
                    body = q.get_nowait()
                except queue.Empty:
                    return
                d = c.process(conn, body)
                if d != mc.Ack():
                    raise AssertionError(f"sync: {d}")
        except BaseException as e:
            errors.append(e)

    start = time.perf_counter()
    ts = [threading.Thread(target=worker, args=(c,)) for c in conns]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    elapsed = time.perf_counter() - start
    for c in conns:
        c.close()
    if errors:
        raise errors[0]
    return len(work) / elapsed


async def async_rate(db: AsyncDatabase, tasks: int, work: list[bytes]) -> float:
    async def handler(tx: Any, m: envelope_pb2.LastError, env: envelope_pb2.Envelope) -> None:
        if isinstance(db, PostgresDatabase):
            await tx.execute("INSERT INTO bench_applied (biz_key, message_id) VALUES ($1, $2)",
                             env.biz_key, env.message_id)
        else:
            await tx.execute("INSERT INTO bench_applied (biz_key, message_id) VALUES (?, ?)",
                             (env.biz_key, env.message_id))

    c = AsyncConsumer(SPEC, "bench", handler)
    it = iter(work)

    async def worker() -> None:
        for body in it:
            d = await c.process(db, body)
            if d != mc.Ack():
                raise AssertionError(f"async: {d}")

    start = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(tasks)))
    return len(work) / (time.perf_counter() - start)


def sqlite_connect(path: str) -> Callable[[], Any]:
    def connect() -> sqlite3.Connection:
        c = sqlite3.connect(path, timeout=30, isolation_level="IMMEDIATE", check_same_thread=False)
        c.execute("PRAGMA journal_mode = WAL")
        c.execute("PRAGMA synchronous = NORMAL")
        return c

    return connect


async def bench_sqlite(n: int, k: int, tmp: str) -> tuple[float, float]:
    path = os.path.join(tmp, f"bench-{k}.db")
    init = sqlite_connect(path)()
    init.execute(APPLIED)
    mc.migrate(init)
    init.close()
    s = await asyncio.to_thread(sync_rate, sqlite_connect(path), "qmark", k, bodies(n, f"sync{k}"))
    db = await SQLiteDatabase.open(path, k)
    try:
        a = await async_rate(db, k, bodies(n, f"async{k}"))
    finally:
        await db.close()
    return s, a


async def bench_postgres(n: int, k: int, dsn: str) -> tuple[float, float]:
    import psycopg

    db = await PostgresDatabase.open(dsn, k)
    try:
        async with db.pool.acquire() as c:
            await c.execute(APPLIED)
            await c.execute("TRUNCATE bench_applied, msg_dedup")
        s = await asyncio.to_thread(sync_rate, lambda: psycopg.connect(dsn), "format", k, bodies(n, f"sync{k}"))
        a = await async_rate(db, k, bodies(n, f"async{k}"))
    finally:
        await db.close()
    return s, a


async def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-n", type=int, default=2000, help="messages per run (default 2000)")
    ap.add_argument("--concurrency", default="1,32", help="concurrent handlers, comma-separated (default 1,32)")
    ap.add_argument("--db", default="sqlite,postgres", help="databases, comma-separated (default sqlite,postgres)")
    args = ap.parse_args()
    print(f"bench-python-async: {args.n} messages per run; load average {os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory() as tmp:
        for dbname in args.db.split(","):
            for k in (int(x) for x in args.concurrency.split(",")):
                if dbname == "sqlite":
                    s, a = await bench_sqlite(args.n, k, tmp)
                else:
                    dsn = os.environ.get("MSGCONTRACT_PG_DSN", "")
                    if not dsn:
                        print("bench-python-async: MSGCONTRACT_PG_DSN is not set (run under scripts/with-postgres.sh)",
                              file=sys.stderr)
                        return 2
                    s, a = await bench_postgres(args.n, k, dsn)
                print(f"{dbname:8} concurrency={k:<3} sync {s:8.0f} msg/s  async {a:8.0f} msg/s  "
                      f"ratio async/sync={a / s:.2f}", flush=True)
    print(f"bench-python-async: load average {os.getloadavg()[0]:.2f} at the end")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
