"""The outbox and its relay's leader lock on SQLite (PostgreSQL: tests_kafka; MySQL: tests_mysql)."""

from __future__ import annotations

import collections
import pathlib
import sqlite3

import pytest

import msgcontract_runtime as mc
from msgcontract.v1 import envelope_pb2
from msgcontract_runtime import outbox
from outbox_support import Recorder, pending, two_relays_at_once
from test_runtime import SPEC


def _db(path: pathlib.Path) -> sqlite3.Connection:
    return sqlite3.connect(str(path), timeout=30, check_same_thread=False)


def _write(conn: sqlite3.Connection, n: int) -> list[str]:
    ids = []
    for i in range(n):
        env = mc.new_envelope(SPEC, envelope_pb2.LastError(range=f"r{i % 7}"), occurred_at_ms=1)
        outbox.write(conn, env)
        ids.append(env.message_id)
    conn.commit()
    return ids


def test_two_relays_at_once_publish_each_row_once(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "biz.db"
    conn = _db(path)
    outbox.migrate(conn)
    ids = _write(conn, 120)
    rec = Recorder()
    sent = two_relays_at_once([_db(path), _db(path)], [rec, rec], "qmark")
    assert sorted(sent) == [0, 120], sent  # the lock holder published everything
    assert collections.Counter(rec.ids) == collections.Counter(ids)  # each row once
    assert rec.ids == ids  # in id order
    assert pending(conn) == 0


def test_lease_moves_when_the_holder_stops_or_releases(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "biz.db"
    conn = _db(path)
    outbox.migrate(conn)
    outbox.migrate(conn)  # idempotent: still one lock row
    assert conn.execute("SELECT count(*) FROM msg_outbox_lock").fetchone() == (1,)
    now = [1_000_000]
    rec_a, rec_b = Recorder(delay_s=0), Recorder(delay_s=0)
    a = outbox.Relay(_db(path), rec_a, lease_s=10, clock_ms=lambda: now[0])
    b = outbox.Relay(_db(path), rec_b, lease_s=10, clock_ms=lambda: now[0])
    _write(conn, 2)
    assert (a.flush(), b.flush()) == (2, 0)
    _write(conn, 1)
    now[0] += 10_000  # a's lease ends at exactly now: still a's
    assert (b.flush(), a.flush()) == (0, 1)  # a's pass renewed it
    now[0] += 10_001  # a stopped passing: its lease ran out
    _write(conn, 1)
    assert (b.flush(), a.flush()) == (1, 0)
    b.release()
    _write(conn, 1)
    assert a.flush() == 1
    a.release()
    _write(conn, 1)
    assert outbox.relay_once(conn, rec_b) == 1  # a one-off pass takes the lock and gives it back
    assert outbox.relay_once(conn, rec_b) == 0
    assert (len(rec_a.ids), len(rec_b.ids)) == (4, 2)


def test_failed_publish_holds_back_its_key_only(tmp_path: pathlib.Path) -> None:
    conn = _db(tmp_path / "biz.db")
    outbox.migrate(conn)
    ids = _write(conn, 9)  # keys r0..r6, then r0 and r1 again

    class Flaky(Recorder):
        failed = False

        def publish(self, topic: str, env: envelope_pb2.Envelope) -> None:
            if env.biz_key == "range:r1" and not self.failed:
                self.failed = True
                raise RuntimeError("broker away")
            super().publish(topic, env)

    rec = Flaky(delay_s=0)
    r = outbox.Relay(conn, rec)
    with pytest.raises(RuntimeError, match="broker away"):
        r.flush()
    assert rec.ids == [i for n, i in enumerate(ids) if n not in (1, 8)]  # r1's rows wait, in order
    assert r.flush() == 2
    assert rec.ids[-2:] == [ids[1], ids[8]]
