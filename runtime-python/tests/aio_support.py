"""The asyncio tests' event, business table and databases; also imported by aio_worker.py and the benchmark."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Union

import msgcontract_runtime as mc
import test_runtime
from msgcontract.v1 import envelope_pb2
from msgcontract_runtime.aio.postgres import PostgresDatabase
from msgcontract_runtime.aio.sqlite import SQLiteDatabase, connect

if TYPE_CHECKING:  # aiomysql is installed for make test-mysql only
    from msgcontract_runtime.aio.mysql import MySQLDatabase


SPEC = mc.EventSpec(
    full_name="msgcontract.v1.LastError",
    topic="errors",
    event_type="ERROR_SEEN",
    biz_key_template="range:{range}",
    retry=mc.RetryPolicy(base_ms=50, multiplier=2.0, jitter_ms=0, max_delay_ms=1000, max_retries=2),
    rules=mc.ErrorRules(
        ranges=(mc.ErrorRange(40000, 49999, False, "business"), mc.ErrorRange(50000, 59999, True, "system")),
        unclassified_retryable=False,
    ),
    target_state="",
    message_type=envelope_pb2.LastError,
    key_function=test_runtime.range_key,
)
"""LastError stands in for an event, as in test_runtime, with fast retries and two ranges."""

Database = Union[SQLiteDatabase, PostgresDatabase, "MySQLDatabase"]

CREATE_APPLIED = "CREATE TABLE IF NOT EXISTS applied (biz_key TEXT NOT NULL, message_id TEXT NOT NULL)"


def envelope(key: str) -> envelope_pb2.Envelope:
    return mc.new_envelope(SPEC, envelope_pb2.LastError(range=key), occurred_at_ms=1)


async def open_db(kind: str, where: str, size: int = 4, fresh: bool = True) -> Database:
    """The business database: where is a SQLite path, a PostgreSQL or a MySQL DSN; fresh empties applied
    and msg_dedup."""
    if kind == "mysql":
        from msgcontract_runtime.aio.mysql import MySQLDatabase

        my = await MySQLDatabase.open(where, size)
        await _mysql(my, CREATE_APPLIED)
        if fresh:
            await _mysql(my, "TRUNCATE applied")
            await _mysql(my, "TRUNCATE msg_dedup")
        return my
    if kind == "sqlite":
        c = await connect(where)
        await c.execute(CREATE_APPLIED)
        await c.close()
        return await SQLiteDatabase.open(where, size)
    pg = await PostgresDatabase.open(where, size)
    async with pg.pool.acquire() as pc:
        await pc.execute(CREATE_APPLIED)
        if fresh:
            await pc.execute("TRUNCATE applied, msg_dedup")
    return pg


async def apply(tx: Any, m: envelope_pb2.LastError, env: envelope_pb2.Envelope) -> None:
    """The business write: one applied row per handled message, in the consumer's transaction."""
    if hasattr(tx, "fetchrow"):  # asyncpg
        await tx.execute("INSERT INTO applied (biz_key, message_id) VALUES ($1, $2)", env.biz_key, env.message_id)
    elif _is_aiomysql(tx):
        async with tx.cursor() as cur:
            await cur.execute("INSERT INTO applied (biz_key, message_id) VALUES (%s, %s)",
                              (env.biz_key, env.message_id))
    else:
        await tx.execute("INSERT INTO applied (biz_key, message_id) VALUES (?, ?)", (env.biz_key, env.message_id))


async def applied(db: Database) -> dict[str, int]:
    """How many times each biz_key was applied (committed)."""
    q = "SELECT biz_key, count(*) FROM applied GROUP BY biz_key"
    if not isinstance(db, (PostgresDatabase, SQLiteDatabase)):
        return {str(r[0]): int(r[1]) for r in await _mysql(db, q)}
    if isinstance(db, PostgresDatabase):
        async with db.pool.acquire() as c:
            return {str(r[0]): int(r[1]) for r in await c.fetch(q)}
    return {str(r[0]): int(r[1]) for r in await _read(db, q)}


async def claims(db: Database) -> int:
    """The number of dedup claims committed."""
    q = "SELECT count(*) FROM msg_dedup"
    if not isinstance(db, (PostgresDatabase, SQLiteDatabase)):
        return int((await _mysql(db, q))[0][0])
    if isinstance(db, PostgresDatabase):
        async with db.pool.acquire() as c:
            return int(await c.fetchval(q))
    return int((await _read(db, q))[0][0])


async def _read(db: SQLiteDatabase, q: str) -> list[Any]:
    """Reads on a connection of its own, outside any transaction: a WAL reader never waits for a writer."""
    c = await connect(db.path)
    try:
        async with c.execute(q) as cur:
            return list(await cur.fetchall())
    finally:
        await c.close()


def _is_aiomysql(conn: Any) -> bool:
    return type(conn).__module__.split(".")[0] == "aiomysql"


async def _mysql(db: MySQLDatabase, q: str) -> list[Any]:
    """Runs q on a pooled connection in a transaction of its own (a fresh snapshot), and commits."""
    async with db.pool.acquire() as c:
        async with c.cursor() as cur:
            await cur.execute(q)
            rows = list(await cur.fetchall())
        await c.commit()
        return rows
