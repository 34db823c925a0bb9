"""The transactional outbox on a DB-API connection, in runtime-go's msg_outbox layout.

``write`` stores an envelope in the caller's business transaction (the caller
commits); a ``Relay`` publishes stored rows in id order (so one biz_key's
rows go out in the order they were written) and marks them sent. Delivery is
at least once: a relay that dies between publishing and marking publishes
the row again, and the consumers' dedup absorbs it.

Several relays may run on one database: as runtime-go's and Java's relays,
only the holder of the leader lock publishes (a lease in msg_outbox_lock,
taken or renewed by one conditional UPDATE at the start of each pass), so a
row is not published by two relays at once and per-key order holds. Go,
Java and Python relays share the lock. SQLite, PostgreSQL (psycopg) and
MySQL/MariaDB (PyMySQL, mysqlclient) connections are supported.

``Relay.run`` wakes on commit: ``Relay.notify()`` (a producer in this
process committed; Go's Relay.Notify, Java's OutboxRelay.notifyCommitted)
and, on PostgreSQL through psycopg 3, a NOTIFY that a producer in another
process sent after its commit through a ``Notifier`` (Go's outbox.Notifier,
Java's OutboxNotifier), which a connection of its own LISTENs for, end its
wait at once; the poll interval only bounds how late a row is seen without a
signal (MySQL/MariaDB, and SQLite written by another process, are polled).
"""

from __future__ import annotations

import contextlib
import logging
import sys
import threading
import time
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from msgcontract.v1 import envelope_pb2 as _envelope_pb2
from msgcontract_runtime import ddl
from msgcontract_runtime.dedup import is_mysql
from msgcontract_runtime.envelope import decode, encode

log = logging.getLogger("msgcontract.outbox")

if TYPE_CHECKING:
    from msgcontract_runtime.tracing import Tracing

TABLE = "msg_outbox"
LOCK_TABLE = "msg_outbox_lock"
MARK_CHUNK = 500
"""How many ids one UPDATE of a pass's sent rows binds at most (Go's markChunk)."""
LISTEN_WAIT_S = 0.5
"""How long the LISTEN thread waits for notifications at a time, so that it sees run's end within it."""


class Publisher(Protocol):
    def publish(self, topic: str, env: _envelope_pb2.Envelope) -> None: ...


def placeholder(paramstyle: str) -> str:
    """The placeholder of a DB-API paramstyle: "?" for qmark (sqlite3), "%s" for format and pyformat (psycopg,
    PyMySQL, mysqlclient); ValueError for any other."""
    p = {"qmark": "?", "format": "%s", "pyformat": "%s"}.get(paramstyle)
    if p is None:
        raise ValueError(f"unsupported DB-API paramstyle {paramstyle!r}; use qmark, format or pyformat")
    return p


def _now_ms() -> int:
    return int(time.time() * 1000)


def migrate(conn: Any, postgres: bool = False) -> None:
    """Creates msg_outbox and the relay's lock table (with its one row) if missing, and commits.

    The statements are contracts/sql's (ddl.statements). A MySQL connection
    is recognized by its driver; postgres=True selects PostgreSQL's, else
    SQLite's.
    """
    ddl.create(conn, postgres, *ddl.OUTBOX_TABLES)


def insert_sql(placeholders: tuple[str, str, str, str, str]) -> str:
    """The INSERT of one outbox row with the driver's placeholders (write and aio.outbox.write share it)."""
    return (f"INSERT INTO {TABLE} (topic, biz_key, message_id, envelope, created_at) "
            f"VALUES ({', '.join(placeholders)})")


def row(env: _envelope_pb2.Envelope) -> tuple[str, str, str, bytes, int]:
    """The values of env's outbox row, the one rule of write and aio.outbox.write.

    env must have a topic. When the process uses OpenTelemetry, env without
    a trace context gets the current span's (tracing.inject), so consumers
    continue the trace; otherwise nothing is imported or called.
    """
    if not env.topic:
        raise ValueError(f"outbox: envelope {env.message_id} has no topic; build it with new_envelope")
    inject_trace(env)
    return env.topic, env.biz_key, env.message_id, encode(env), _now_ms()


def inject_trace(env: _envelope_pb2.Envelope) -> None:
    """Gives env without a trace context the current span's (tracing.inject) when the process uses
    OpenTelemetry; otherwise nothing is imported or called. row's rule, and RocketMQTxProducer.send's."""
    if "opentelemetry.trace" in sys.modules:
        from msgcontract_runtime.tracing import inject

        inject(env)


def write(conn: Any, env: _envelope_pb2.Envelope, paramstyle: str = "qmark") -> None:
    """Stores env in conn's current transaction; the caller commits it with the business change.

    env gets the current span's trace context as described in row().
    """
    p = placeholder(paramstyle)
    conn.cursor().execute(insert_sql((p,) * 5), row(env))


class Relay:
    """Publishes the outbox's pending rows while it holds the leader lock, as runtime-go's outbox.Relay.

    conn is the relay's own DB-API connection to the business database
    (paramstyle "format" for psycopg, PyMySQL and mysqlclient). The lock is
    a lease of lease_s seconds renewed by every pass; a relay that stops
    passing loses it after lease_s, and ``release`` gives it up at once. A
    pass longer than the lease may overlap the next holder's: keep
    batch_size small enough to publish within it.

    With a tracer each publish runs in a producer span ``send <topic>``,
    injected into the envelope in place of the writer's (its parent).
    """

    def __init__(self, conn: Any, publisher: Publisher, paramstyle: str = "qmark", lease_s: float = 15.0,
                 batch_size: int = 100, clock_ms: Callable[[], int] = _now_ms,
                 tracer: Tracing | None = None) -> None:
        if lease_s <= 0 or batch_size <= 0:
            raise ValueError("outbox: lease_s and batch_size must be positive")
        self.conn = conn
        self.publisher = publisher
        self.owner = uuid.uuid4().hex
        self.lease_ms = int(lease_s * 1000)
        self.batch_size = batch_size
        self.clock_ms = clock_ms
        self.tracer = tracer
        self._p = placeholder(paramstyle)
        self._wake = threading.Event()

    def lead(self) -> bool:
        """Takes or renews the leader lock; False when another relay's lease runs."""
        p = self._p
        now = self.clock_ms()
        cur = self.conn.cursor()
        cur.execute(f"UPDATE {LOCK_TABLE} SET owner = {p}, lease_until = {p} "
                    f"WHERE name = 'relay' AND (owner = {p} OR lease_until < {p})",
                    (self.owner, now + self.lease_ms, self.owner, now))
        n = cur.rowcount
        self.conn.commit()
        if n == 1 or not is_mysql(self.conn):
            return bool(n == 1)
        # MySQL counts changed rows, not matched ones: a renewal within the
        # same millisecond changes nothing.
        cur = self.conn.cursor()
        cur.execute(f"SELECT owner FROM {LOCK_TABLE} WHERE name = 'relay'")
        row = cur.fetchone()
        self.conn.commit()
        return row is not None and (row[0].decode() if isinstance(row[0], bytes) else row[0]) == self.owner

    def release(self) -> None:
        """Gives the lock up, so another relay may lead at once."""
        p = self._p
        self.conn.cursor().execute(f"UPDATE {LOCK_TABLE} SET lease_until = 0 WHERE name = 'relay' AND owner = {p}",
                                   (self.owner,))
        self.conn.commit()

    def flush(self) -> int:
        """One pass: if this relay leads, publishes up to batch_size unsent rows in id order, then marks
        those the publisher took sent in one statement; returns how many it published (0 when another
        relay leads).

        After a failed publish the later rows of its biz_key wait for the next
        pass, so per-key order holds; the first error is raised at the end.
        """
        if not self.lead():
            return 0
        cur = self.conn.cursor()
        cur.execute(f"SELECT id, topic, biz_key, envelope FROM {TABLE} WHERE sent_at = 0 ORDER BY id "
                    f"LIMIT {int(self.batch_size)}")
        rows = cur.fetchall()
        self.conn.commit()
        blocked: set[str] = set()
        first: Exception | None = None
        sent: list[int] = []
        for row_id, topic, key, body in rows:
            if key in blocked:
                continue
            try:
                self._publish(topic, decode(bytes(body)))
            except Exception as e:  # the publisher's failure: this key waits for the next pass
                blocked.add(key)
                first = first or e
                continue
            sent.append(row_id)
        self._mark_sent(sent)
        if first is not None:
            raise first
        return len(sent)

    def _mark_sent(self, ids: list[int]) -> None:
        """Marks rows sent in one committed UPDATE per MARK_CHUNK ids: one commit (one fsync on a durable
        database) per pass, not per row. Rows published but not marked (the relay died in between) are
        published again by the next pass: consumers deduplicate them."""
        p = self._p
        now = self.clock_ms()
        for i in range(0, len(ids), MARK_CHUNK):
            chunk = ids[i:i + MARK_CHUNK]
            self.conn.cursor().execute(f"UPDATE {TABLE} SET sent_at = {p} WHERE id IN ({', '.join([p] * len(chunk))})",
                                       (now, *chunk))
            self.conn.commit()

    def _publish(self, topic: str, env: _envelope_pb2.Envelope) -> None:
        if self.tracer is None:
            self.publisher.publish(topic, env)
            return
        with self.tracer.publish(topic, env):
            self.publisher.publish(topic, env)

    def notify(self) -> None:
        """Tells the relay that a transaction which wrote to the outbox has committed, so that a waiting
        ``run`` makes its next pass (and checks stop) now instead of after poll_interval_s: runtime-go's
        Relay.Notify, runtime-java's OutboxRelay.notifyCommitted. Call it after the commit, never
        before: a pass that runs before the commit does not see the row. It never blocks; calls that
        arrive during a pass fold into one more pass."""
        self._wake.set()

    def run(self, stop: Callable[[], bool], poll_interval_s: float = 0.1) -> None:
        """Passes until stop() is true, then releases the lock: at once after a full batch, else after a
        wait of up to poll_interval_s that ``notify`` and, on PostgreSQL (psycopg 3), a ``Notifier``'s
        NOTIFY from another process end at once (a thread LISTENs on a connection of its own, opened
        with conn's parameters, again after poll_interval_s when it fails). A failed pass is logged.
        stop() is checked after each pass and wait: notify() after setting it stops a long wait."""
        halt = threading.Event()
        listener = self._listen(halt, poll_interval_s)
        try:
            while not stop():
                try:
                    n = self.flush()
                except Exception as e:  # the database or the publisher: the next pass tries again
                    log.error("msgcontract: outbox relay pass failed: %s", e)
                    n = 0
                if n < self.batch_size and not stop():
                    self._wake.wait(poll_interval_s)
                    self._wake.clear()
        finally:
            halt.set()
            if listener is not None:
                listener.join()
            self.release()

    def _listen(self, halt: threading.Event, retry_s: float) -> threading.Thread | None:
        """Starts the LISTEN thread on a psycopg 3 connection; None (the relay polls) on other drivers."""
        if type(self.conn).__module__.split(".", 1)[0] != "psycopg":
            return None
        import psycopg

        info = self.conn.info

        def listen() -> None:
            while not halt.is_set():
                try:
                    with psycopg.connect(info.dsn, password=info.password, autocommit=True) as lc:
                        lc.execute(f"LISTEN {TABLE}")
                        # A commit between the last pass and LISTEN would go unnoticed: one pass covers it.
                        self.notify()
                        while not halt.is_set():
                            for _ in lc.notifies(timeout=LISTEN_WAIT_S):
                                self.notify()
                except Exception as e:  # the connection failed: poll until it is back
                    if halt.is_set():
                        return
                    log.warning("msgcontract: outbox relay LISTEN failed; polling every %ss until it is back: %s",
                                retry_s, e)
                    halt.wait(retry_s)

        t = threading.Thread(target=listen, name="msgcontract-outbox-listen", daemon=True)
        t.start()
        return t

def relay_once(conn: Any, publisher: Publisher, paramstyle: str = "qmark", limit: int = 100,
               tracer: Tracing | None = None) -> int:
    """One pass of a one-off Relay that releases the lock afterwards; 0 when another relay holds it."""
    r = Relay(conn, publisher, paramstyle, batch_size=limit, tracer=tracer)
    try:
        return r.flush()
    finally:
        r.release()


class Notifier:
    """Wakes the relays that LISTEN on a PostgreSQL database (every psycopg 3 ``Relay.run`` there does)
    from a producer in another process: call ``notify()`` after each commit that wrote to the outbox. In
    the relay's own process ``Relay.notify`` is enough and costs nothing. runtime-go's outbox.Notifier
    and runtime-java's OutboxNotifier do the same.

    connect opens a DB-API connection to the database holding the outbox (psycopg 3, psycopg2, pg8000):
    ``lambda: psycopg.connect(dsn, autocommit=True)``. The notifier's daemon thread opens it on its
    first send and keeps it, opening a new one after a failure, and sends ``SELECT
    pg_notify('msg_outbox', '')`` on it, committed, outside the business transaction and at most one at
    a time: notifications asked for while one is on its way fold into one more. PostgreSQL serializes
    the commits of transactions that NOTIFY (one database-wide lock from pre-commit to the end of the
    commit), so a NOTIFY inside every business transaction (a trigger on the outbox) cuts durable
    commits several-fold (pgbench, 16 clients: about 990 against 6,700 inserts a second); one notifying
    transaction in flight per notifier does not hold back the business commits. A failed NOTIFY is
    logged; the relays then see the row after their poll interval.

    ``close()`` (or leaving a ``with`` block) sends what is still asked for, then ends the thread and
    closes its connection.
    """

    def __init__(self, connect: Callable[[], Any]) -> None:
        self._connect = connect
        self._conn: Any = None
        self._cond = threading.Condition()
        self._pending = False
        self._closed = False
        self._thread = threading.Thread(target=self._loop, name="msgcontract-outbox-notify", daemon=True)
        self._thread.start()

    def notify(self) -> None:
        """Asks for one NOTIFY on the outbox's channel, sent by the notifier's thread; it never blocks.
        Call it after the commit, never before: a relay woken before the commit does not see the row.
        Calls after close() do nothing."""
        with self._cond:
            if self._closed:
                return
            self._pending = True
            self._cond.notify()

    def _loop(self) -> None:
        try:
            while True:
                with self._cond:
                    self._cond.wait_for(lambda: self._pending or self._closed)
                    if not self._pending:
                        return
                    self._pending = False
                self._send()
        finally:
            self._drop()

    def _send(self) -> None:
        try:
            if self._conn is None:
                self._conn = self._connect()
            self._conn.cursor().execute(f"SELECT pg_notify('{TABLE}', '')")
            self._conn.commit()
        except Exception as e:  # the database: the relays poll; the next send opens a new connection
            log.warning("msgcontract: outbox NOTIFY failed; relays see the rows after their poll interval: %s", e)
            self._drop()

    def _drop(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            with contextlib.suppress(Exception):  # already broken: nothing to give back
                conn.close()

    def close(self) -> None:
        """Sends the NOTIFY still asked for, if any, then ends the thread and waits for it."""
        with self._cond:
            self._closed = True
            self._cond.notify()
        self._thread.join()

    def __enter__(self) -> Notifier:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
