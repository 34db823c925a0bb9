"""aiomysql for the asyncio consumer: a MySQL/MariaDB business database. Install with the ``aiomysql`` extra.

The claim is dedup.py's on MySQL: a plain INSERT into the InnoDB claim
table; error 1062 (duplicate key) means already claimed and fails that
statement only, so the transaction goes on. A second worker's INSERT of the
same key waits for the first's transaction and then fails with 1062 (or
succeeds, when the first rolled back).

A cancelled handler may leave its connection mid-query; aiomysql then closes
the socket, but the server would go on running the query and holding the
transaction's locks. So a transaction that did not end in a COMMIT or
ROLLBACK that returned is ended on the server: ``KILL CONNECTION`` from a
connection of its own (which rolls the transaction back), bounded by
``KILL_TIMEOUT_S``, and the connection is closed, never reused.
"""

from __future__ import annotations

import asyncio
import logging
import urllib.parse
from typing import Any

import aiomysql
import pymysql

from msgcontract_runtime import ddl
from msgcontract_runtime.aio import shielded
from msgcontract_runtime.dedup import DEDUP_INSERT_MYSQL, ChainPos, ChainStep, chain_sql, is_duplicate_key

log = logging.getLogger("msgcontract_runtime.aio.mysql")

KILL_TIMEOUT_S = 10.0
"""How long ending an unfinished transaction on the server (connect, KILL) may take."""

_DUPLICATE_KEY = 1062
_CHAIN = chain_sql("mysql")
_UNKNOWN_THREAD = 1094  # KILL of a connection that is already gone


class _MySQLTransaction:
    def __init__(self, db: MySQLDatabase, conn: Any) -> None:
        self._db = db
        self._conn = conn
        self._ended = False  # a COMMIT or ROLLBACK returned: the connection is clean

    @property
    def conn(self) -> Any:
        """The aiomysql connection handlers use (``async with conn.cursor() as cur``)."""
        return self._conn

    async def claim(self, biz_key: str, handler: str, message_id: str, payload_hash: str, now_ms: int) -> bool:
        async with self._conn.cursor() as cur:
            try:
                await cur.execute(DEDUP_INSERT_MYSQL, (biz_key, handler, message_id, payload_hash, now_ms))
            except pymysql.err.IntegrityError as e:
                if e.args[:1] == (_DUPLICATE_KEY,):
                    return False
                raise
        return True

    async def chain_insert(self, step: ChainStep) -> bool:
        async with self._conn.cursor() as cur:
            try:
                await cur.execute(_CHAIN.insert.sql, _CHAIN.insert_args(step))
            except pymysql.err.IntegrityError as e:
                if is_duplicate_key(e):
                    return False  # the message has a row
                raise
        return True

    async def chain_update(self, step: ChainStep) -> bool:
        # MySQL counts changed rows: a row that already holds exactly step is
        # 0, and advance reads it back.
        async with self._conn.cursor() as cur:
            await cur.execute(_CHAIN.advance.sql, _CHAIN.advance_args(step))
            return bool(cur.rowcount == 1)

    async def chain_row(self, handler: str, message_id: str) -> ChainPos | None:
        async with self._conn.cursor() as cur:
            await cur.execute(_CHAIN.lookup.sql, _CHAIN.lookup_args(handler, message_id))
            r = await cur.fetchone()
        return None if r is None else ChainPos(int(r[0]), int(r[1]), str(r[2]))

    async def commit(self) -> None:
        await self._conn.commit()
        self._ended = True

    async def rollback(self) -> None:
        if not self._ended:
            await self._conn.rollback()
            self._ended = True

    async def close(self) -> None:
        if not self._ended:
            await self._db.kill(self._conn)
        self._db.pool.release(self._conn)


class MySQLDatabase:
    """An aiomysql pool; each transaction is BEGIN ... COMMIT on one pooled connection (autocommit off).

    The pool does not reset session state between transactions (handlers
    must not leave any: SET, user locks, temporary tables).
    """

    def __init__(self, pool: Any, connect_kwargs: dict[str, Any]) -> None:
        self.pool = pool
        self._connect_kwargs = connect_kwargs

    @classmethod
    async def open(cls, dsn: str, size: int = 4) -> MySQLDatabase:
        """Opens a pool of size connections to dsn (mysql://user:password@host:port/database), creates the claim
        and retry chain tables."""
        kw = connect_kwargs(dsn)
        pool = await aiomysql.create_pool(minsize=size, maxsize=size, autocommit=False, **kw)
        async with pool.acquire() as c:
            async with c.cursor() as cur:
                for stmt in ddl.statements(ddl.MYSQL, *ddl.DEDUP_TABLES):
                    await cur.execute(stmt)
            await c.commit()
        return cls(pool, kw)

    async def begin(self) -> _MySQLTransaction:
        conn = await self.pool.acquire()
        tx = _MySQLTransaction(self, conn)
        try:
            await conn.begin()
        except BaseException:
            await shielded(tx.close())
            raise
        return tx

    async def kill(self, conn: Any) -> None:
        """Ends conn's session on the server (its transaction rolls back) and closes conn; bounded, never raises."""
        thread_id = conn.thread_id() if getattr(conn, "server_thread_id", None) else None
        conn.close()
        if thread_id is None:
            return
        try:
            await asyncio.wait_for(self._kill(thread_id), KILL_TIMEOUT_S)
        except Exception as e:  # the socket is closed; the server ends the session when it notices
            log.warning("msgcontract: KILL CONNECTION %d failed: %r", thread_id, e)

    async def _kill(self, thread_id: int) -> None:
        c = await aiomysql.connect(autocommit=True, **self._connect_kwargs)
        try:
            async with c.cursor() as cur:
                try:
                    await cur.execute("KILL CONNECTION %s", (thread_id,))
                except pymysql.err.InternalError as e:
                    if e.args[:1] != (_UNKNOWN_THREAD,):
                        raise
        finally:
            c.close()

    async def close(self) -> None:
        """Closes the pool; connections that do not close in time are terminated."""
        self.pool.close()
        try:
            await asyncio.wait_for(self.pool.wait_closed(), KILL_TIMEOUT_S)
        except asyncio.TimeoutError:
            self.pool.terminate()
        except asyncio.CancelledError:
            self.pool.terminate()
            raise


def connect_kwargs(dsn: str) -> dict[str, Any]:
    """aiomysql.connect's keyword arguments for a mysql://user:password@host:port/database DSN."""
    u = urllib.parse.urlparse(dsn)
    if u.scheme not in ("mysql", "mariadb"):
        raise ValueError(f"not a mysql:// DSN: {u.scheme}://...")
    return {
        "host": u.hostname or "localhost",
        "port": u.port or 3306,
        "user": urllib.parse.unquote(u.username or ""),
        "password": urllib.parse.unquote(u.password or ""),
        "db": u.path.lstrip("/") or None,
        "charset": "utf8mb4",
    }


__all__ = ["KILL_TIMEOUT_S", "MySQLDatabase", "connect_kwargs"]
