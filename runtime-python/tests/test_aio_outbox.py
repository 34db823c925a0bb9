"""aio.outbox.write: the outbox row in the caller's async transaction, on aiosqlite and asyncpg."""

from __future__ import annotations

import pathlib
import sqlite3
import uuid
from collections.abc import Callable
from typing import Any

import aiosqlite
import asyncpg
import psycopg
import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider

import msgcontract_runtime as mc
from conftest import pg_dsn
from msgcontract.v1 import envelope_pb2
from msgcontract_runtime import outbox
from msgcontract_runtime.aio import outbox as aio_outbox
from msgcontract_runtime.aio.sqlite import connect
from msgcontract_runtime.dedup import driver
from outbox_support import Recorder
from test_runtime import SPEC


def envelope(r: str) -> envelope_pb2.Envelope:
    return mc.new_envelope(SPEC, envelope_pb2.LastError(range=r), occurred_at_ms=1)


def test_aiosqlite_write_commits_and_rolls_back_with_the_business_change(
    arun: Callable[..., Any], tmp_path: pathlib.Path,
) -> None:
    path = str(tmp_path / "biz.db")
    sync = sqlite3.connect(path, timeout=30)
    outbox.migrate(sync)
    kept, dropped = envelope("kept"), envelope("dropped")
    app = TracerProvider().get_tracer("test").start_span("order pay")

    async def main() -> None:
        c = await connect(path)
        try:
            await c.execute("BEGIN")
            await aio_outbox.write(c, dropped)
            await c.rollback()  # the business change failed: its event must not exist
            await c.execute("BEGIN")
            with trace.use_span(app, end_on_exit=False):
                await aio_outbox.write(c, kept)
            await c.commit()
        finally:
            await c.close()

    arun(main)
    rec = Recorder(delay_s=0)
    assert outbox.relay_once(sync, rec) == 1
    assert rec.ids == [kept.message_id]
    assert kept.trace.traceparent.split("-")[1] == format(app.get_span_context().trace_id, "032x")


def test_asyncpg_write_commits_and_rolls_back_with_the_business_change(arun: Callable[..., Any]) -> None:
    schema = "aio_outbox_" + uuid.uuid4().hex[:8]
    with psycopg.connect(pg_dsn()) as sync:
        sync.execute(f"CREATE SCHEMA {schema}")
        sync.execute(f"SET search_path TO {schema}")
        outbox.migrate(sync, postgres=True)
        kept, dropped = envelope("kept"), envelope("dropped")

        async def main() -> None:
            c = await asyncpg.connect(pg_dsn(), server_settings={"search_path": schema})
            try:
                tx = c.transaction()
                await tx.start()
                await aio_outbox.write(c, dropped)
                await tx.rollback()
                async with c.transaction():
                    await aio_outbox.write(c, kept)
            finally:
                await c.close()

        arun(main)
        rec = Recorder(delay_s=0)
        assert outbox.relay_once(sync, rec, paramstyle="format") == 1
        assert rec.ids == [kept.message_id]
        sync.execute(f"DROP SCHEMA {schema} CASCADE")


def test_write_refuses_a_connection_it_cannot_join(arun: Callable[..., Any]) -> None:
    async def main() -> None:
        await aio_outbox.write(sqlite3.connect(":memory:"), envelope("x"))

    with pytest.raises(TypeError, match="not an asyncpg, aiosqlite or aiomysql connection"):
        arun(main)


def test_write_refuses_a_connection_in_no_transaction(arun: Callable[..., Any], tmp_path: pathlib.Path) -> None:
    """An asyncpg pool, an asyncpg connection outside a transaction, an autocommit aiosqlite connection."""
    path = str(tmp_path / "biz.db")
    outbox.migrate(sqlite3.connect(path))

    async def main() -> list[str]:
        refused = []
        pool = await asyncpg.create_pool(pg_dsn(), min_size=1, max_size=1)
        c = await asyncpg.connect(pg_dsn())
        s = await connect(path)
        await s.close()
        auto = await aiosqlite.connect(path, isolation_level=None)
        try:
            for conn in (pool, c, auto):
                with pytest.raises(ValueError, match="is in no transaction"):
                    await aio_outbox.write(conn, envelope("x"))
                refused.append(driver(conn))
        finally:
            await auto.close()
            await c.close()
            await pool.close()
        return refused

    assert arun(main) == ["asyncpg", "asyncpg", "aiosqlite"]
    assert outbox.relay_once(sqlite3.connect(path), Recorder(delay_s=0)) == 0

