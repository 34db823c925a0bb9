"""The outbox relay's leader lock on MySQL/MariaDB through PyMySQL (make test-mysql)."""

from __future__ import annotations

import collections
import os
from typing import Any

import msgcontract_runtime as mc
from msgcontract.v1 import envelope_pb2
from msgcontract_runtime import outbox
from outbox_support import Recorder, pending, two_relays_at_once
from test_dedup_mysql import _connect, conn  # noqa: F401  (conn: the per-test database fixture)
from test_runtime import SPEC


def test_two_relays_at_once_publish_each_row_once(conn: Any) -> None:  # noqa: F811
    outbox.migrate(conn)
    outbox.migrate(conn)  # idempotent: one lock row
    cur = conn.cursor()
    cur.execute("SELECT count(*) FROM msg_outbox_lock")
    assert cur.fetchone() == (1,)
    ids = []
    for i in range(80):
        env = mc.new_envelope(SPEC, envelope_pb2.LastError(range=f"r{i % 7}"), occurred_at_ms=1)
        outbox.write(conn, env, "format")
        ids.append(env.message_id)
    conn.commit()
    name = conn.db.decode()
    rec = Recorder()
    relays = [_connect(name), _connect(name)]
    try:
        sent = two_relays_at_once(relays, [rec, rec], "format")
    finally:
        for c in relays:
            c.close()
    assert sorted(sent) == [0, 80], sent
    assert collections.Counter(rec.ids) == collections.Counter(ids)
    assert rec.ids == ids
    assert pending(conn) == 0


def test_renewal_within_one_millisecond_keeps_the_lock(conn: Any) -> None:  # noqa: F811
    """MySQL reports changed rows: a renewal that changes nothing must still count as leading."""
    outbox.migrate(conn)
    r = outbox.Relay(conn, Recorder(delay_s=0), "format", clock_ms=lambda: 5_000)
    other = outbox.Relay(_connect(conn.db.decode()), Recorder(delay_s=0), "format", clock_ms=lambda: 5_000)
    try:
        assert r.lead() and r.lead()
        assert not other.lead()
    finally:
        other.conn.close()


def test_aiomysql_write_commits_and_rolls_back_with_the_business_change(conn: Any) -> None:  # noqa: F811
    """aio.outbox.write in an aiomysql transaction: the row exists exactly when the transaction commits."""
    import asyncio

    import aiomysql

    from msgcontract_runtime.aio import outbox as aio_outbox
    from msgcontract_runtime.aio.mysql import connect_kwargs

    outbox.migrate(conn)
    kept = mc.new_envelope(SPEC, envelope_pb2.LastError(range="kept"), occurred_at_ms=1)
    dropped = mc.new_envelope(SPEC, envelope_pb2.LastError(range="dropped"), occurred_at_ms=1)

    async def main() -> None:
        kw = connect_kwargs(os.environ["MSGCONTRACT_MYSQL_DSN"])
        kw["db"] = conn.db.decode() if isinstance(conn.db, bytes) else conn.db
        c = await aiomysql.connect(autocommit=False, **kw)
        try:
            await aio_outbox.write(c, dropped)
            await c.rollback()  # the business change failed: its event must not exist
            await aio_outbox.write(c, kept)
            await c.commit()
        finally:
            c.close()

    asyncio.run(main())
    rec = Recorder(delay_s=0)
    assert outbox.relay_once(conn, rec, paramstyle="format") == 1
    assert rec.ids == [kept.message_id]
