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
"""

from __future__ import annotations

import logging
import sys
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


class Publisher(Protocol):
    def publish(self, topic: str, env: _envelope_pb2.Envelope) -> None: ...


def _p(paramstyle: str) -> str:
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
    d = ddl.MYSQL if is_mysql(conn) else ddl.POSTGRES if postgres else ddl.SQLITE
    cur = conn.cursor()
    for stmt in ddl.statements(d, *ddl.OUTBOX_TABLES):
        cur.execute(stmt)
    conn.commit()


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
    if "opentelemetry.trace" in sys.modules:
        from msgcontract_runtime.tracing import inject

        inject(env)
    return env.topic, env.biz_key, env.message_id, encode(env), _now_ms()


def write(conn: Any, env: _envelope_pb2.Envelope, paramstyle: str = "qmark") -> None:
    """Stores env in conn's current transaction; the caller commits it with the business change.

    env gets the current span's trace context as described in row().
    """
    p = _p(paramstyle)
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
        self._p = _p(paramstyle)

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
        """One pass: if this relay leads, publishes up to batch_size unsent rows in id order, marking each
        sent after the publisher returned; returns how many it published (0 when another relay leads).

        After a failed publish the later rows of its biz_key wait for the next
        pass, so per-key order holds; the first error is raised at the end.
        """
        if not self.lead():
            return 0
        p = self._p
        cur = self.conn.cursor()
        cur.execute(f"SELECT id, topic, biz_key, envelope FROM {TABLE} WHERE sent_at = 0 ORDER BY id "
                    f"LIMIT {int(self.batch_size)}")
        rows = cur.fetchall()
        self.conn.commit()
        blocked: set[str] = set()
        first: Exception | None = None
        sent = 0
        for row_id, topic, key, body in rows:
            if key in blocked:
                continue
            try:
                self._publish(topic, decode(bytes(body)))
            except Exception as e:  # the publisher's failure: this key waits for the next pass
                blocked.add(key)
                first = first or e
                continue
            self.conn.cursor().execute(f"UPDATE {TABLE} SET sent_at = {p} WHERE id = {p}", (self.clock_ms(), row_id))
            self.conn.commit()
            sent += 1
        if first is not None:
            raise first
        return sent

    def _publish(self, topic: str, env: _envelope_pb2.Envelope) -> None:
        if self.tracer is None:
            self.publisher.publish(topic, env)
            return
        with self.tracer.publish(topic, env):
            self.publisher.publish(topic, env)

    def run(self, stop: Callable[[], bool], poll_interval_s: float = 0.1) -> None:
        """Passes until stop() is true, pausing poll_interval_s after a pass that had less than a batch
        to do or failed (logged), then releases the lock."""
        try:
            while not stop():
                try:
                    n = self.flush()
                except Exception as e:  # the database or the publisher: the next pass tries again
                    log.error("msgcontract: outbox relay pass failed: %s", e)
                    n = 0
                if n < self.batch_size:
                    time.sleep(poll_interval_s)
        finally:
            self.release()


def relay_once(conn: Any, publisher: Publisher, paramstyle: str = "qmark", limit: int = 100,
               tracer: Tracing | None = None) -> int:
    """One pass of a one-off Relay that releases the lock afterwards; 0 when another relay holds it."""
    r = Relay(conn, publisher, paramstyle, batch_size=limit, tracer=tracer)
    try:
        return r.flush()
    finally:
        r.release()
