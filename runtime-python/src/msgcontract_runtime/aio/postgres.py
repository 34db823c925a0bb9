"""asyncpg for the asyncio consumer: a PostgreSQL business database. Install with the ``asyncpg`` extra.

A cancelled handler leaves its connection mid-query; the connection goes back
to the pool through asyncpg's Pool.release with a timeout, which waits for
the server to cancel the query and rolls the transaction back; a connection
that does not come back in time is terminated, never waited for.
"""

from __future__ import annotations

import asyncio
from typing import Any

import asyncpg

from msgcontract_runtime import ddl
from msgcontract_runtime.aio import SQLTransaction, shielded
from msgcontract_runtime.dedup import ChainPos, ChainStep, chain_sql

RELEASE_TIMEOUT_S = 10.0
"""How long a connection's rollback and release may take before it is terminated."""

_CLAIM = (
    "INSERT INTO msg_dedup (biz_key, handler, message_id, payload_hash, created_at) "
    "VALUES ($1, $2, $3, $4, $5) ON CONFLICT (biz_key, handler) DO NOTHING"
)
_CHAIN = chain_sql("$n")


class _PostgresTransaction(SQLTransaction):
    def __init__(self, pool: asyncpg.Pool[Any], conn: Any) -> None:
        super().__init__(conn)
        self._pool = pool

    async def claim(self, biz_key: str, handler: str, message_id: str, payload_hash: str, now_ms: int) -> bool:
        status: str = await self._conn.execute(_CLAIM, biz_key, handler, message_id, payload_hash, now_ms)
        return status == "INSERT 0 1"

    async def chain_insert(self, step: ChainStep) -> bool:
        status: str = await self._conn.execute(_CHAIN.insert.sql, *_CHAIN.insert_args(step))
        return status == "INSERT 0 1"

    async def chain_update(self, step: ChainStep) -> bool:
        status: str = await self._conn.execute(_CHAIN.advance.sql, *_CHAIN.advance_args(step))
        return status == "UPDATE 1"

    async def chain_row(self, handler: str, message_id: str) -> ChainPos | None:
        r = await self._conn.fetchrow(_CHAIN.lookup.sql, *_CHAIN.lookup_args(handler, message_id))
        return None if r is None else ChainPos(int(r[0]), int(r[1]), str(r[2]))

    async def close(self) -> None:
        # Pool.release waits for a cancelled query's cancellation, then rolls
        # back an open transaction (the pool's reset hook below adds nothing
        # to that); on a timeout or error it terminates the connection.
        self._open = False
        await self._pool.release(self._conn, timeout=RELEASE_TIMEOUT_S)


async def _no_session_reset(conn: Any) -> None:
    """The pool's reset hook: the consumer sets no session state, so a clean release costs no round trip."""


class PostgresDatabase:
    """An asyncpg pool; each transaction is BEGIN ... COMMIT on one pooled connection.

    The pool does not reset session state between transactions (handlers
    must not leave any: SET, LISTEN, advisory locks); an open transaction is
    always rolled back.
    """

    def __init__(self, pool: asyncpg.Pool[Any]) -> None:
        self.pool = pool

    @classmethod
    async def open(cls, dsn: str, size: int = 4) -> PostgresDatabase:
        """Opens a pool of size connections to dsn and creates the claim and retry chain tables."""
        pool: asyncpg.Pool[Any] | None = await asyncpg.create_pool(
            dsn, min_size=size, max_size=size, reset=_no_session_reset
        )
        assert pool is not None
        async with pool.acquire() as c:
            for stmt in ddl.statements(ddl.POSTGRES, *ddl.DEDUP_TABLES):
                await c.execute(stmt)
        return cls(pool)

    async def begin(self) -> _PostgresTransaction:
        conn = await self.pool.acquire()
        tx = _PostgresTransaction(self.pool, conn)
        try:
            await conn.execute("BEGIN")
        except BaseException:
            await shielded(tx.close())
            raise
        return tx

    async def close(self) -> None:
        """Closes the pool; connections that do not close in time are terminated."""
        try:
            await asyncio.wait_for(self.pool.close(), RELEASE_TIMEOUT_S)
        except asyncio.TimeoutError:
            self.pool.terminate()
        except asyncio.CancelledError:
            self.pool.terminate()
            raise
