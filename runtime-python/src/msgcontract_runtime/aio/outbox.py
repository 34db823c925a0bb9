"""The transactional outbox for asyncio services: write in the caller's async transaction.

An asyncio service changes its business rows in an aiosqlite, asyncpg or
aiomysql transaction; ``await write(conn, env)`` stores the event in that
same transaction, so it exists exactly when the business change commits.
The rows are msgcontract_runtime.outbox's (runtime-go's msg_outbox layout),
and any relay publishes them: outbox.Relay on a DB-API connection, or the
Go and Java relays. Create the tables with outbox.migrate (or the Go
runtime's migration) before the first write.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from msgcontract.v1 import envelope_pb2 as _envelope_pb2
from msgcontract_runtime.dedup import driver
from msgcontract_runtime.outbox import insert_sql, row

_IN_TRANSACTION: dict[str, Callable[[Any], bool]] = {
    # A Pool has no is_in_transaction: its execute would commit on its own.
    "asyncpg": lambda c: callable(getattr(c, "is_in_transaction", None)) and bool(c.is_in_transaction()),
    # sqlite3 begins a transaction before an INSERT unless isolation_level is None (autocommit).
    "aiosqlite": lambda c: bool(c.in_transaction) or c.isolation_level is not None,
    "aiomysql": lambda c: not c.get_autocommit(),
}
"""Whether a connection of each driver runs the write inside a transaction the caller commits."""


async def write(conn: Any, env: _envelope_pb2.Envelope) -> None:
    """Stores env in conn's current transaction; the caller commits it with the business change.

    conn is an asyncpg connection, an aiosqlite connection or an aiomysql
    connection, inside the caller's transaction (outbox.row says what the
    row holds, and how it carries the current trace). Any other object
    (TypeError), and a connection in no transaction such as an asyncpg
    Pool or an autocommit connection (ValueError), is refused: writing
    outside the caller's transaction would lose the atomicity the outbox
    exists for.
    """
    name = driver(conn)
    if name in _IN_TRANSACTION and not _IN_TRANSACTION[name](conn):
        raise ValueError(f"outbox: the {name} connection is in no transaction, so the event would commit without "
                         "the business change; write it inside the business transaction")
    if name == "asyncpg":
        await conn.execute(insert_sql(("$1", "$2", "$3", "$4", "$5")), *row(env))
    elif name == "aiosqlite":
        await conn.execute(insert_sql(("?",) * 5), row(env))
    elif name == "aiomysql":
        async with conn.cursor() as cur:
            await cur.execute(insert_sql(("%s",) * 5), row(env))
    else:
        raise TypeError(f"outbox: {type(conn).__module__}.{type(conn).__name__} is not an asyncpg, aiosqlite or "
                        "aiomysql connection; pass the connection of the business transaction")
