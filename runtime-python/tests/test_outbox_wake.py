"""A relay whose poll interval is an hour still publishes a committed row at once when it is woken: by
Relay.notify from the producer's process, and on PostgreSQL by an outbox.Notifier's NOTIFY from another
connection, as from another process (integration/runtime/outbox/wake_test.go for Go, OutboxWakeTest for
Java). Without the wake-up nothing is published within the test's minute."""

from __future__ import annotations

import pathlib
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest

import msgcontract_runtime as mc
from conftest import pg_dsn
from msgcontract.v1 import envelope_pb2
from msgcontract_runtime import outbox
from outbox_support import Recorder, pending
from test_runtime import SPEC

HOUR_S = 3600.0
WAIT_S = 60.0


class CountingRelay(outbox.Relay):
    """A relay that counts its passes, so the test knows when the first one is over."""

    passes = 0

    def flush(self) -> int:
        try:
            return super().flush()
        finally:
            self.passes += 1


def wait_for(cond: Callable[[], bool]) -> None:
    deadline = time.monotonic() + WAIT_S
    while not cond():
        if time.monotonic() > deadline:
            pytest.fail("not woken: the relay waited out its poll interval", pytrace=False)
        time.sleep(0.01)


def check(relay_conn: Any, writer: Any, paramstyle: str,
          notify: Callable[[outbox.Relay], Callable[[], None]]) -> None:
    """Runs a relay with an hour's poll interval on relay_conn, then writes three rows through writer, one
    transaction each, calling notify(relay) after each commit, and waits for each to be published."""
    rec = Recorder(delay_s=0)
    relay = CountingRelay(relay_conn, rec, paramstyle)
    stopped = threading.Event()
    t = threading.Thread(target=relay.run, args=(stopped.is_set, HOUR_S), name="wake-test-relay")
    t.start()
    wake = notify(relay)
    try:
        # The first pass finds nothing; from then on the relay waits out its hour unless woken (the
        # LISTEN thread's own first wake-up included: give it time to pass).
        wait_for(lambda: relay.passes >= 1)
        time.sleep(0.5)
        ids = []
        for i in range(3):
            env = mc.new_envelope(SPEC, envelope_pb2.LastError(range=f"r{i}"), occurred_at_ms=1)
            outbox.write(writer, env, paramstyle)
            writer.commit()
            ids.append(env.message_id)
            wake()
            wait_for(lambda: len(rec.ids) == len(ids))
        assert rec.ids == ids
    finally:
        stopped.set()
        relay.notify()  # ends the hour's wait, so run sees stop
        t.join(WAIT_S)
    assert not t.is_alive(), "the relay did not stop"
    assert pending(writer) == 0


def test_sqlite_relay_wakes_on_notify(tmp_path: pathlib.Path) -> None:
    path = str(tmp_path / "biz.db")
    writer = sqlite3.connect(path, timeout=30)
    outbox.migrate(writer)
    check(sqlite3.connect(path, timeout=30, check_same_thread=False), writer, "qmark", lambda r: r.notify)


@pytest.fixture
def pg_schema() -> Iterator[Callable[[], psycopg.Connection[Any]]]:
    """Connections to a schema of its own, dropped afterwards."""
    schema = "wake_" + uuid.uuid4().hex[:12]
    conns: list[psycopg.Connection[Any]] = []

    def connect() -> psycopg.Connection[Any]:
        c = psycopg.connect(pg_dsn(), options=f"-c search_path={schema}")
        conns.append(c)
        return c

    with psycopg.connect(pg_dsn(), autocommit=True) as admin:
        admin.execute(f"CREATE SCHEMA {schema}")
        try:
            outbox.migrate(connect(), postgres=True)
            yield connect
        finally:
            for c in conns:
                c.close()
            admin.execute(f"DROP SCHEMA {schema} CASCADE")


def test_postgres_relay_wakes_on_notify(pg_schema: Callable[[], psycopg.Connection[Any]]) -> None:
    check(pg_schema(), pg_schema(), "format", lambda r: r.notify)


def test_postgres_relay_wakes_on_a_notifier_of_another_connection(
        pg_schema: Callable[[], psycopg.Connection[Any]]) -> None:
    """The row is written on another connection (another process, as far as the relay can tell) and
    nothing calls the relay's notify: a Notifier's NOTIFY on a connection of its own wakes it."""
    with outbox.Notifier(pg_schema) as notifier:
        check(pg_schema(), pg_schema(), "format", lambda r: notifier.notify)


class SlowConnection:
    """A DB-API connection whose statements the test counts; the first one waits for release."""

    def __init__(self) -> None:
        self.statements: list[str] = []
        self.sending = threading.Event()
        self.release = threading.Event()

    def cursor(self) -> SlowConnection:
        return self

    def execute(self, sql: str) -> None:
        self.statements.append(sql)
        if len(self.statements) == 1:
            self.sending.set()
            assert self.release.wait(WAIT_S)

    def commit(self) -> None:
        pass

    def close(self) -> None:
        pass


def test_notifier_folds_calls_during_a_send_into_one_more() -> None:
    conn = SlowConnection()
    with outbox.Notifier(lambda: conn) as notifier:
        notifier.notify()
        assert conn.sending.wait(WAIT_S)
        for _ in range(100):
            notifier.notify()  # returns although the send in flight does not
        assert len(conn.statements) == 1
        conn.release.set()
    assert conn.statements == ["SELECT pg_notify('msg_outbox', '')"] * 2
    notifier.notify()  # after close: nothing
    assert len(conn.statements) == 2


def test_notifier_logs_a_failure_and_opens_a_new_connection(caplog: pytest.LogCaptureFixture) -> None:
    opened: list[SlowConnection] = []

    def connect() -> SlowConnection:
        if not opened:
            opened.append(SlowConnection())
            raise OSError("no database yet")
        c = SlowConnection()
        c.release.set()
        opened.append(c)
        return c

    with outbox.Notifier(connect) as notifier:
        notifier.notify()
        wait_for(lambda: len(opened) == 1)
        notifier.notify()  # during the failing send or after it: one more send either way
    assert len(opened) == 2 and opened[1].statements == ["SELECT pg_notify('msg_outbox', '')"]
    assert "outbox NOTIFY failed" in caplog.text and "no database yet" in caplog.text
