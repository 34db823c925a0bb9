"""aiosqlite for the asyncio consumer: a SQLite business database and the embedded SQLite queue.

``SQLiteQueue`` reads and writes the Go runtime's sqlitequeue tables
(mc_queue, mc_subscriptions, mc_dead_letter) with the same leases, so Go and
Python processes can share one queue file. Install with the ``aiosqlite``
extra.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import time
from collections.abc import Sequence
from typing import Any

import aiosqlite

from msgcontract.v1 import envelope_pb2 as _envelope_pb2
from msgcontract_runtime import ddl
from msgcontract_runtime.aio import DeadLetterRecord, Delivery, SQLTransaction, shielded
from msgcontract_runtime.dedup import ChainPos, ChainStep, chain_sql, dedup_insert_sql
from msgcontract_runtime.envelope import encode, new_message_id

_CHAIN = chain_sql("qmark")

BUSY_TIMEOUT_MS = 30000
"""How long a writer waits for SQLite's lock, as the Go runtime's sqlitedb.Open."""


def _now_ms() -> int:
    return int(time.time() * 1000)


async def connect(path: str) -> aiosqlite.Connection:
    """Opens path in WAL mode with a busy timeout, in autocommit mode (transactions are explicit)."""
    conn = await aiosqlite.connect(path, isolation_level=None)
    await conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    await conn.execute("PRAGMA journal_mode = WAL")
    await conn.execute("PRAGMA synchronous = NORMAL")
    return conn


class _SQLiteTransaction(SQLTransaction):
    def __init__(self, db: SQLiteDatabase, conn: aiosqlite.Connection) -> None:
        super().__init__(conn)
        self._db = db

    async def claim(self, biz_key: str, handler: str, message_id: str, payload_hash: str, now_ms: int) -> bool:
        cur = await self._conn.execute(dedup_insert_sql("qmark"), (biz_key, handler, message_id, payload_hash, now_ms))
        return bool(cur.rowcount == 1)

    async def chain_insert(self, step: ChainStep) -> bool:
        cur = await self._conn.execute(_CHAIN.insert.sql, _CHAIN.insert_args(step))
        return bool(cur.rowcount == 1)

    async def chain_update(self, step: ChainStep) -> bool:
        cur = await self._conn.execute(_CHAIN.advance.sql, _CHAIN.advance_args(step))
        return bool(cur.rowcount == 1)

    async def chain_row(self, handler: str, message_id: str) -> ChainPos | None:
        async with self._conn.execute(_CHAIN.lookup.sql, _CHAIN.lookup_args(handler, message_id)) as cur:
            r = await cur.fetchone()
        return None if r is None else ChainPos(int(r[0]), int(r[1]), str(r[2]))

    async def close(self) -> None:
        # aiosqlite runs a connection's statements in order on its own
        # thread, so a ROLLBACK queued behind a cancelled statement runs after
        # it: the connection is clean when it goes back to the pool.
        try:
            if self._open or self._conn.in_transaction:
                self._open = False
                await self._conn.execute("ROLLBACK")
        except Exception:
            await self._db._discard(self._conn)
            return
        finally:
            self._db._writer.release()
        self._db._pool.put_nowait(self._conn)


class SQLiteDatabase:
    """A pool of aiosqlite connections to one SQLite file; each transaction begins IMMEDIATE.

    SQLite has one writer at a time: the process's transactions take turns on
    an asyncio lock (a waiting handler costs nothing and is cancellable), and
    other processes wait through the busy timeout. So on SQLite concurrent
    handlers overlap only outside their transactions; a handler must not
    begin a second transaction on the same database.
    """

    def __init__(self, path: str, size: int) -> None:
        self.path = path
        self.size = size
        self._pool: asyncio.Queue[aiosqlite.Connection] = asyncio.Queue()
        self._all: list[aiosqlite.Connection] = []
        self._writer = asyncio.Lock()

    @classmethod
    async def open(cls, path: str, size: int = 4) -> SQLiteDatabase:
        """Opens size connections to path and creates the claim and retry chain tables."""
        db = cls(path, size)
        for _ in range(size):
            c = await connect(path)
            db._all.append(c)
            db._pool.put_nowait(c)
        c = await db._pool.get()
        try:
            for stmt in ddl.statements(ddl.SQLITE, *ddl.DEDUP_TABLES):
                await c.execute(stmt)
        finally:
            db._pool.put_nowait(c)
        return db

    async def begin(self) -> _SQLiteTransaction:
        await self._writer.acquire()
        try:
            conn = await self._pool.get()
        except BaseException:
            self._writer.release()
            raise
        try:
            await conn.execute("BEGIN IMMEDIATE")
        except BaseException:
            await shielded(_SQLiteTransaction(self, conn).close())
            raise
        return _SQLiteTransaction(self, conn)

    async def _discard(self, conn: aiosqlite.Connection) -> None:
        with contextlib.suppress(Exception):
            await conn.close()
        self._all.remove(conn)
        c = await connect(self.path)
        self._all.append(c)
        self._pool.put_nowait(c)

    async def close(self) -> None:
        """Closes every connection."""
        for c in self._all:
            await c.close()
        self._all.clear()


@dataclasses.dataclass(frozen=True)
class _Handle:
    row: int
    owner: str


class SQLiteQueue:
    """The embedded SQLite queue on one aiosqlite connection; its writes are serialised by a lock."""

    def __init__(self, conn: aiosqlite.Connection, lease_ms: int) -> None:
        self._conn = conn
        self.lease_ms = lease_ms
        self._lock = asyncio.Lock()
        self._wake = asyncio.Event()

    @classmethod
    async def open(cls, path: str, lease_ms: int = 60_000) -> SQLiteQueue:
        """Opens (and creates) the queue tables in path; lease_ms is how long a fetched delivery stays leased."""
        conn = await connect(path)
        # contracts/sql/sqlite.sql's queue tables, which Go's sqlitequeue creates too.
        for stmt in ddl.statements(ddl.SQLITE, *ddl.QUEUE_TABLES):
            await conn.execute(stmt)
        return cls(conn, lease_ms)

    async def close(self) -> None:
        """Closes the connection."""
        await self._conn.close()

    async def _enqueue(self, topic: str, grp: str, body: bytes, not_before: int) -> None:
        now = _now_ms()
        groups = [grp]
        if not grp:
            async with self._conn.execute("SELECT grp FROM mc_subscriptions WHERE topic = ?", (topic,)) as cur:
                groups = [str(r[0]) async for r in cur] or [""]  # "" is adopted by the first subscriber
        await self._conn.executemany(
            "INSERT INTO mc_queue (msg_id, topic, grp, body, not_before, created_at) VALUES (?, ?, ?, ?, ?, ?)",
            [(new_message_id(), topic, g, body, not_before, now) for g in groups],
        )

    async def _write(self, stmts: Any) -> Any:
        """Runs stmts(conn) in one IMMEDIATE transaction under the lock; cancellation-safe."""
        async with self._lock:
            if self._conn.in_transaction:  # a rollback a second cancellation left in flight
                await self._conn.execute("ROLLBACK")
            await self._conn.execute("BEGIN IMMEDIATE")
            ok = False
            try:
                result = await stmts()
                await self._conn.execute("COMMIT")
                ok = True
            finally:
                if not ok:
                    await shielded(self._rollback())
        self._wake.set()
        return result

    async def _rollback(self) -> None:
        if self._conn.in_transaction:
            await self._conn.execute("ROLLBACK")

    async def publish(self, topic: str, env: _envelope_pb2.Envelope) -> None:
        """Enqueues env for every group subscribed to topic."""
        await self.publish_raw(topic, encode(env), env.not_before)

    async def publish_raw(self, topic: str, body: bytes, not_before: int = 0) -> None:
        """Enqueues body as it is (a test's undecodable body, say)."""

        async def stmts() -> None:
            await self._enqueue(topic, "", body, not_before)

        await self._write(stmts)

    async def publish_many(self, topic: str, envs: Sequence[_envelope_pb2.Envelope]) -> None:
        """Enqueues envs in one transaction."""

        async def stmts() -> None:
            for env in envs:
                await self._enqueue(topic, "", encode(env), env.not_before)

        await self._write(stmts)

    async def subscribe(self, group: str, topics: Sequence[str]) -> SQLiteSubscription:
        """Subscribes group to topics; messages enqueued before any group subscribed are adopted."""
        if not group or not topics:
            raise ValueError("subscribe needs a group and at least one topic")

        async def stmts() -> None:
            for t in topics:
                await self._conn.execute(
                    "INSERT INTO mc_subscriptions (topic, grp, created_at) VALUES (?, ?, ?) "
                    "ON CONFLICT (topic, grp) DO NOTHING",
                    (t, group, _now_ms()),
                )
                await self._conn.execute("UPDATE mc_queue SET grp = ? WHERE topic = ? AND grp = ''", (group, t))

        await self._write(stmts)
        return SQLiteSubscription(self, group, list(topics))

    async def _read(self, sql: str, args: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """The rows of a query, read under the write lock.

        Reads share the one connection with _write, so without the lock a
        read could run inside another task's open transaction and see it
        half done: between a retry's delete and its enqueue, the backlog
        would count the message as gone.
        """
        async with self._lock, self._conn.execute(sql, args) as cur:
            return [tuple(r) async for r in cur]

    async def backlog(self, group: str = "") -> int:
        """Counts the queued rows of group (every group for ""), committed ones only."""
        rows = await self._read("SELECT count(*) FROM mc_queue WHERE ?1 = '' OR grp = ?1 OR grp = ''", (group,))
        return int(rows[0][0]) if rows else 0

    async def dead_letters(self) -> list[tuple[Any, ...]]:
        """The dead-letter rows as (message_id, reason, code, attempts, handler), oldest first."""
        return await self._read("SELECT message_id, reason, code, attempts, handler FROM mc_dead_letter ORDER BY id")


class SQLiteSubscription:
    """A group's subscription to topics of a SQLiteQueue; fetches lease rows as the Go runtime does."""

    def __init__(self, q: SQLiteQueue, group: str, topics: list[str]) -> None:
        self.q = q
        self.group = group
        self.topics = topics
        self._token = os.urandom(8).hex()
        self._seq = 0
        ph = ", ".join("?" for _ in topics)
        self._claim = (
            "UPDATE mc_queue SET lease_owner = ?, lease_until = ?, deliveries = deliveries + 1 "
            f"WHERE id IN (SELECT id FROM mc_queue WHERE grp = ? AND topic IN ({ph}) AND not_before <= ? "
            "AND lease_until <= ? ORDER BY id LIMIT ?) RETURNING id, topic, body, deliveries"
        )

    async def fetch(self, max_count: int, wait_s: float) -> Sequence[Delivery]:
        deadline = time.monotonic() + wait_s
        while True:
            self.q._wake.clear()
            ds = await self._try_fetch(max_count)
            if ds:
                return ds
            left = deadline - time.monotonic()
            if left <= 0:
                return []
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self.q._wake.wait(), min(left, 0.05))

    async def _try_fetch(self, max_count: int) -> list[Delivery]:
        self._seq += 1
        owner = f"{self._token}:{self._seq}"
        now = _now_ms()
        args = (owner, now + self.q.lease_ms, self.group, *self.topics, now, now, max_count)

        async def stmts() -> list[Delivery]:
            async with self.q._conn.execute(self._claim, args) as cur:
                rows = await cur.fetchall()
            return [Delivery(str(r[1]), bytes(r[2]), int(r[3]), _Handle(int(r[0]), owner)) for r in rows]

        ds: list[Delivery] = await self.q._write(stmts)
        ds.sort(key=lambda d: int(d.handle.row))
        return ds

    async def _delete(self, d: Delivery) -> bool:
        h: _Handle = d.handle
        cur = await self.q._conn.execute("DELETE FROM mc_queue WHERE id = ? AND lease_owner = ?", (h.row, h.owner))
        return bool(cur.rowcount == 1)

    async def ack(self, d: Delivery) -> None:
        async def stmts() -> None:
            await self._delete(d)

        await self.q._write(stmts)

    async def defer(self, d: Delivery, not_before_ms: int) -> None:
        h: _Handle = d.handle

        async def stmts() -> None:
            await self.q._conn.execute(
                "UPDATE mc_queue SET not_before = ?, lease_owner = '', lease_until = 0 "
                "WHERE id = ? AND lease_owner = ?",
                (not_before_ms, h.row, h.owner),
            )

        await self.q._write(stmts)

    async def release(self, d: Delivery) -> None:
        h: _Handle = d.handle

        async def stmts() -> None:
            await self.q._conn.execute(
                "UPDATE mc_queue SET lease_owner = '', lease_until = 0 WHERE id = ? AND lease_owner = ?",
                (h.row, h.owner),
            )

        await self.q._write(stmts)

    async def retry(self, d: Delivery, env: _envelope_pb2.Envelope) -> None:
        body = encode(env)

        async def stmts() -> None:
            if await self._delete(d):  # a lost lease: whoever holds it now settles
                await self.q._enqueue(d.topic or env.topic, self.group, body, env.not_before)

        await self.q._write(stmts)

    async def dead_letter(self, d: Delivery, r: DeadLetterRecord) -> None:
        async def stmts() -> None:
            if await self._delete(d):
                await self.q._conn.execute(
                    "INSERT INTO mc_dead_letter (topic, grp, handler, event_type, biz_key, message_id, envelope, "
                    "reason, code, error, attempts, first_failed_at, last_failed_at, dead_at) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (r.topic, self.group, r.handler, r.event_type, r.biz_key, r.message_id, r.envelope, r.reason,
                     r.code, r.error, r.attempts, r.first_failed_at, r.last_failed_at, r.dead_at),
                )

        await self.q._write(stmts)

