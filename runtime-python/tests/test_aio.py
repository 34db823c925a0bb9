"""The asyncio consumer on SQLite (aiosqlite) and PostgreSQL (asyncpg), with the embedded SQLite queue.

Fault tests: a task cancelled mid-handler, a worker process SIGKILLed
mid-batch, a duplicate delivered to two workers at once, a retryable failure
then success, poison. Each checks that nothing was applied twice and nothing
was lost. Every test runs under conftest.run_async's timeout, which fails it
with every task's stack instead of hanging.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sqlite3
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

import msgcontract_runtime as mc
from aio_support import SPEC, Database, applied, apply, claims, envelope, open_db
from conftest import pg_dsn
from msgcontract.v1 import envelope_pb2
from msgcontract_runtime.aio import AsyncConsumer
from msgcontract_runtime.aio.postgres import PostgresDatabase
from msgcontract_runtime.aio.sqlite import SQLiteDatabase, SQLiteQueue, SQLiteSubscription

Run = Callable[..., Any]


@pytest.fixture(params=["sqlite", "postgres"])
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def where(kind: str, tmp_path: Path) -> str:
    return str(tmp_path / "business.db") if kind == "sqlite" else pg_dsn()


async def setup(
    tmp_path: Path, kind: str, where: str, size: int = 4, fresh: bool = True
) -> tuple[SQLiteQueue, SQLiteSubscription, Database]:
    q = await SQLiteQueue.open(str(tmp_path / "queue.db"), lease_ms=1000)
    sub = await q.subscribe("g", [SPEC.topic])
    return q, sub, await open_db(kind, where, size, fresh)


async def close(q: SQLiteQueue, db: Database) -> None:
    await db.close()
    await q.close()


@contextlib.asynccontextmanager
async def opened(
    tmp_path: Path, kind: str, where: str, size: int = 4, fresh: bool = True
) -> AsyncIterator[tuple[SQLiteQueue, SQLiteSubscription, Database]]:
    """setup's queue, subscription and database, closed however the test ends.

    A failed assertion must not leave an aiosqlite connection open: its
    worker thread would keep pytest from exiting.
    """
    q, sub, db = await setup(tmp_path, kind, where, size, fresh)
    try:
        yield q, sub, db
    finally:
        await close(q, db)


async def consume_all(c: AsyncConsumer[Any], q: SQLiteQueue, sub: SQLiteSubscription, db: Database) -> None:
    """Runs c until the queue is empty (retries included), then stops it gracefully."""
    stop = asyncio.Event()
    task = asyncio.create_task(c.run(sub, db, stop))
    while await q.backlog("g") > 0:
        if task.done():
            task.result()
            raise AssertionError("run returned before the queue was empty")
        await asyncio.sleep(0.02)
    stop.set()
    await task


def test_async_decisions_are_the_sync_ones(arun: Run, tmp_path: Path) -> None:
    """Consumer.process and AsyncConsumer.process decide alike on the same bodies and clock."""
    bodies = [mc.encode(envelope("a")), mc.encode(envelope("a")), b"\xff\x01", mc.encode(envelope("fail-retry")),
              mc.encode(envelope("fail-business"))]
    late = envelope("late")
    late.not_before = 10**15
    bodies.append(mc.encode(late))
    exhausted = envelope("fail-retry-2")
    exhausted.retry_count = 2
    bodies.append(mc.encode(exhausted))

    def outcome(m: envelope_pb2.LastError) -> None:
        if m.range.startswith("fail-retry"):
            raise SPEC.rules.error(50301, "down")
        if m.range == "fail-business":
            raise SPEC.rules.error(40001, "closed")

    conn = sqlite3.connect(":memory:")
    mc.migrate(conn)
    sync = mc.Consumer(SPEC, "h", lambda tx, m, e: outcome(m), clock_ms=lambda: 5000, rand=lambda: 0.5)
    want = [sync.process(conn, b) for b in bodies]

    async def handler(tx: Any, m: envelope_pb2.LastError, e: envelope_pb2.Envelope) -> None:
        outcome(m)

    async def main() -> list[mc.Decision]:
        db = await SQLiteDatabase.open(str(tmp_path / "b.db"), 1)
        c = AsyncConsumer(SPEC, "h", handler, clock_ms=lambda: 5000, rand=lambda: 0.5)
        try:
            return [await c.process(db, b) for b in bodies]
        finally:
            await db.close()

    got = arun(main)
    assert got == want
    assert [type(d).__name__ for d in got] == ["Ack", "Ack", "DeadLetter", "Retry", "DeadLetter", "Defer", "DeadLetter"]
    assert got[1] == mc.Ack(deduplicated=True)


def test_cancelled_mid_handler_rolls_back_and_is_redelivered(arun: Run, tmp_path: Path, kind: str, where: str) -> None:
    """A run cancelled with a whole batch in flight applies nothing and acknowledges nothing.

    On PostgreSQL and MySQL (tests_mysql) every handler is inside a query
    (pg_sleep, SLEEP) when the cancel comes; on SQLite one is inside its transaction and the rest wait for the
    writer lock.
    """
    n = 4
    started: list[str] = []

    async def stuck(tx: Any, m: envelope_pb2.LastError, env: envelope_pb2.Envelope) -> None:
        await apply(tx, m, env)
        started.append(env.biz_key)
        if kind == "postgres":
            await tx.execute("SELECT pg_sleep(3600)")
        elif kind == "mysql":
            async with tx.cursor() as cur:
                await cur.execute("SELECT SLEEP(3600)")
        else:
            await asyncio.sleep(3600)

    async def main() -> None:
        async with opened(tmp_path, kind, where, size=n) as (q, sub, db):
            await q.publish_many(SPEC.topic, [envelope(f"m{i}") for i in range(n)])
            run = asyncio.create_task(AsyncConsumer(SPEC, "h", stuck, concurrency=n).run(sub, db))
            inside = 1 if kind == "sqlite" else n
            while len(started) < inside or await q.backlog("g") != n or not await leased(q, n):
                assert not run.done(), run
                await asyncio.sleep(0.01)
            await asyncio.sleep(0.1)  # the server queries reach pg_sleep or SLEEP
            run.cancel()
            with pytest.raises(asyncio.CancelledError):
                await run
            assert await applied(db) == {}
            assert await claims(db) == 0
            async with q._conn.execute("SELECT count(*), max(lease_owner), max(deliveries) FROM mc_queue") as cur:
                assert tuple(await cur.fetchone() or ()) == (n, "", 1), "released, not acknowledged"
            if isinstance(db, PostgresDatabase):
                async with db.pool.acquire() as c:
                    # This database's only: another suite may share the cluster.
                    left = await c.fetchval(
                        "SELECT count(*) FROM pg_stat_activity"
                        " WHERE datname = current_database() AND query LIKE 'SELECT pg_sleep%'"
                    )
                    assert left == 0, "a cancelled query still runs on the server"
            if kind == "mysql":
                assert await mysql_sleeping(db, killed=False) == 0, "a cancelled query's session was not KILLed"
                while await mysql_sleeping(db, killed=True):  # KILLed sessions leave the process list as they end
                    await asyncio.sleep(0.05)
            await consume_all(AsyncConsumer(SPEC, "h", apply, concurrency=n), q, sub, db)
            assert await applied(db) == {f"range:m{i}": 1 for i in range(n)}

    arun(main)


async def mysql_sleeping(db: Any, killed: bool) -> int:
    """The sessions on db's MySQL/MariaDB database in SELECT SLEEP: not KILLed, or KILLed and not yet ended too."""
    q = ("SELECT count(*) FROM information_schema.PROCESSLIST WHERE DB = DATABASE() AND INFO LIKE 'SELECT SLEEP%%' "
         "AND (%s OR COMMAND != 'Killed')")
    async with db.pool.acquire() as c:
        async with c.cursor() as cur:
            await cur.execute(q, (killed,))
            row = await cur.fetchone()
        await c.commit()
    return int(row[0])


async def leased(q: SQLiteQueue, n: int) -> bool:
    async with q._conn.execute("SELECT count(*) FROM mc_queue WHERE lease_owner != ''") as cur:
        row = await cur.fetchone()
    return row is not None and row[0] == n


def test_sigkill_mid_batch_loses_nothing_and_applies_once(arun: Run, tmp_path: Path, kind: str, where: str) -> None:
    n = 200
    queue = str(tmp_path / "queue.db")

    async def prepare() -> None:
        async with opened(tmp_path, kind, where) as (q, _, db):
            await q.publish_many(SPEC.topic, [envelope(f"m{i}") for i in range(n)])

    arun(prepare)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(Path(__file__).parent), *sys.path]))
    worker = subprocess.Popen(
        [sys.executable, str(Path(__file__).parent / "aio_worker.py"), queue, kind, where, "8"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )
    try:
        async def until_some() -> int:
            db = await open_db(kind, where, fresh=False)
            try:
                while True:
                    done = sum((await applied(db)).values())
                    if done >= 20 or worker.poll() is not None:
                        return done
                    await asyncio.sleep(0.01)
            finally:
                await db.close()

        done = arun(until_some)
        assert worker.poll() is None, worker.communicate()
        os.kill(worker.pid, signal.SIGKILL)
        assert worker.wait(timeout=30) == -signal.SIGKILL, "the worker was not killed"
    finally:
        if worker.poll() is None:
            worker.kill()
            worker.wait()
    assert done < n, "the kill came after the batch"

    async def recover() -> dict[str, int]:
        async with opened(tmp_path, kind, where, fresh=False) as (q, sub, db):
            await asyncio.sleep(1.1)  # the killed worker's leases run out
            await consume_all(AsyncConsumer(SPEC, "h", apply, concurrency=8), q, sub, db)
            got = await applied(db)
        return got

    assert arun(recover) == {f"range:m{i}": 1 for i in range(n)}


def test_duplicate_to_two_workers_at_once(arun: Run, tmp_path: Path, kind: str, where: str) -> None:
    """Two deliveries of one message, processed concurrently by two workers with their own connections."""
    async def main() -> None:
        async with opened(tmp_path, kind, where) as (q, sub1, db1):
            sub2 = await q.subscribe("g", [SPEC.topic])
            db2 = await open_db(kind, where, fresh=False)
            try:
                env = envelope("dup")
                await q.publish_many(SPEC.topic, [env, env])
                d1 = await sub1.fetch(1, 1)
                d2 = await sub2.fetch(1, 1)
                assert len(d1) == 1 and len(d2) == 1
                entered = 0

                async def slow(tx: Any, m: envelope_pb2.LastError, e: envelope_pb2.Envelope) -> None:
                    nonlocal entered
                    entered += 1
                    await apply(tx, m, e)
                    await asyncio.sleep(0.3)

                c1 = AsyncConsumer(SPEC, "h", slow)
                c2 = AsyncConsumer(SPEC, "h", slow)
                got = await asyncio.gather(c1.handle(sub1, db1, d1[0]), c2.handle(sub2, db2, d2[0]))
                assert sorted(str(g) for g in got) == sorted([str(mc.Ack()), str(mc.Ack(deduplicated=True))])
                assert entered == 1, "the second worker's handler ran"
                assert await applied(db1) == {"range:dup": 1}
                assert await claims(db1) == 1
                assert await q.backlog("g") == 0
            finally:
                await db2.close()

    arun(main)


def test_retryable_failure_then_success(arun: Run, tmp_path: Path, kind: str, where: str) -> None:
    seen: list[envelope_pb2.Envelope] = []

    async def flaky(tx: Any, m: envelope_pb2.LastError, env: envelope_pb2.Envelope) -> None:
        seen.append(env)
        await apply(tx, m, env)  # rolled back with the failure
        if env.retry_count == 0:
            raise SPEC.rules.error(50301, "ledger down")

    async def main() -> None:
        async with opened(tmp_path, kind, where) as (q, sub, db):
            await q.publish(SPEC.topic, envelope("r"))
            await consume_all(AsyncConsumer(SPEC, "h", flaky), q, sub, db)
            assert [e.retry_count for e in seen] == [0, 1]
            assert (seen[1].last_error.code, seen[1].last_error.range) == (50301, "system")
            assert seen[1].first_failed_at > 0
            assert await applied(db) == {"range:r": 1}
            assert await claims(db) == 1
            assert await q.dead_letters() == []

    arun(main)


def test_poison_is_dead_lettered_never_applied(arun: Run, tmp_path: Path, kind: str, where: str) -> None:
    async def picky(tx: Any, m: envelope_pb2.LastError, env: envelope_pb2.Envelope) -> None:
        await apply(tx, m, env)
        if m.range == "business":
            raise SPEC.rules.error(40001, "order closed")
        if m.range == "always":
            raise SPEC.rules.error(50301, "down")
        if m.range == "uncoded":
            raise RuntimeError("bug")

    async def main() -> None:
        async with opened(tmp_path, kind, where) as (q, sub, db):
            envs = {k: envelope(k) for k in ("ok", "business", "always", "uncoded")}
            await q.publish_many(SPEC.topic, list(envs.values()))
            await q.publish_raw(SPEC.topic, b"\xff\x01\x02")
            await consume_all(AsyncConsumer(SPEC, "h", picky, concurrency=4), q, sub, db)
            assert await applied(db) == {"range:ok": 1}
            assert await claims(db) == 1
            rows = await q.dead_letters()
            assert sorted((r[0], r[1], r[2], r[3]) for r in rows) == sorted([
                ("", "decode", mc.CODE_DECODE, 0),
                (envs["business"].message_id, "non_retryable", 40001, 1),
                (envs["always"].message_id, "retries_exhausted", 50301, 3),
                (envs["uncoded"].message_id, "non_retryable", 0, 1),
            ])
            assert await q.backlog("g") == 0

    arun(main)


def test_timeout_fails_with_task_stacks(tmp_path: Path) -> None:
    """The guard itself: a hung test fails, naming where it waits."""
    from conftest import run_async

    async def hang() -> None:
        await asyncio.sleep(3600)

    with pytest.raises(pytest.fail.Exception, match=r"timed out after 1s(.|\n)*hang"):
        run_async(hang, timeout_s=1)



def test_backlog_never_sees_a_retry_half_done(arun: Run, tmp_path: Path) -> None:
    """A retry deletes the delivery and enqueues its successor in one transaction; a backlog
    read meanwhile waits for it and counts the successor, never 0 (which once let a test stop
    its consumer with a retry still to come)."""

    async def main() -> None:
        q = await SQLiteQueue.open(str(tmp_path / "queue.db"))
        try:
            sub = await q.subscribe("g", [SPEC.topic])
            env = envelope("always")
            await q.publish(SPEC.topic, env)
            [d] = await sub.fetch(1, 1.0)
            deleted, go_on = asyncio.Event(), asyncio.Event()
            enqueue = q._enqueue

            async def gated_enqueue(topic: str, grp: str, body: bytes, not_before: int) -> None:
                deleted.set()
                await go_on.wait()
                await enqueue(topic, grp, body, not_before)

            q._enqueue = gated_enqueue  # type: ignore[method-assign]
            env.retry_count = 1
            retry = asyncio.create_task(sub.retry(d, env))
            await deleted.wait()
            backlog = asyncio.create_task(q.backlog("g"))
            await asyncio.wait({backlog}, timeout=0.5)  # a read inside the open transaction would answer here
            go_on.set()
            await retry
            assert await backlog == 1
        finally:
            await q.close()

    arun(main)
