"""The transactional outbox on a DB-API connection, in runtime-go's msg_outbox layout.

``write`` stores an envelope in the caller's business transaction (the caller
commits); ``relay_once`` publishes stored rows in id order (so one biz_key's
rows go out in the order they were written) and marks them sent. Delivery is
at least once: a relay that dies between publishing and marking publishes
the row again, and the consumers' dedup absorbs it. Run one relay per
database (runtime-go's relay lease, msg_outbox_lock, is not taken here).
"""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING, Any, Optional, Protocol

from msgcontract.v1 import envelope_pb2 as _envelope_pb2
from msgcontract_runtime.envelope import decode, encode

if TYPE_CHECKING:
    from msgcontract_runtime.tracing import Tracing

TABLE = "msg_outbox"


class Publisher(Protocol):
    def publish(self, topic: str, env: _envelope_pb2.Envelope) -> None: ...


def _p(paramstyle: str) -> str:
    p = {"qmark": "?", "format": "%s", "pyformat": "%s"}.get(paramstyle)
    if p is None:
        raise ValueError(f"unsupported DB-API paramstyle {paramstyle!r}; use qmark, format or pyformat")
    return p


def migrate(conn: Any, postgres: bool = False) -> None:
    """Creates msg_outbox (and runtime-go's lock table) if missing, and commits."""
    serial = "BIGSERIAL PRIMARY KEY" if postgres else "INTEGER PRIMARY KEY AUTOINCREMENT"
    blob = "BYTEA" if postgres else "BLOB"
    cur = conn.cursor()
    cur.execute(
        f"CREATE TABLE IF NOT EXISTS {TABLE} (id {serial}, topic TEXT NOT NULL, biz_key TEXT NOT NULL, "
        f"message_id TEXT NOT NULL, envelope {blob} NOT NULL, created_at BIGINT NOT NULL, "
        "sent_at BIGINT NOT NULL DEFAULT 0)"
    )
    cur.execute(f"CREATE INDEX IF NOT EXISTS {TABLE}_pending ON {TABLE} (sent_at, id)")
    cur.execute("CREATE TABLE IF NOT EXISTS msg_outbox_lock (name TEXT PRIMARY KEY, owner TEXT NOT NULL, "
                "lease_until BIGINT NOT NULL)")
    conn.commit()


def write(conn: Any, env: _envelope_pb2.Envelope, paramstyle: str = "qmark") -> None:
    """Stores env in conn's current transaction; the caller commits it with the business change.

    When the process uses OpenTelemetry, env without a trace context gets
    the current span's (tracing.inject), so consumers continue the trace;
    otherwise nothing is imported or called.
    """
    if not env.topic:
        raise ValueError(f"outbox: envelope {env.message_id} has no topic; build it with new_envelope")
    if "opentelemetry.trace" in sys.modules:
        from msgcontract_runtime.tracing import inject

        inject(env)
    p = _p(paramstyle)
    conn.cursor().execute(
        f"INSERT INTO {TABLE} (topic, biz_key, message_id, envelope, created_at) VALUES ({p}, {p}, {p}, {p}, {p})",
        (env.topic, env.biz_key, env.message_id, encode(env), int(time.time() * 1000)),
    )


def relay_once(conn: Any, publisher: Publisher, paramstyle: str = "qmark", limit: int = 100,
               tracer: Optional[Tracing] = None) -> int:
    """Publishes up to limit unsent rows in id order, marking each sent after the broker acknowledged it.

    With a tracer each publish runs in a producer span ``publish <topic>``,
    injected into the envelope in place of the writer's (its parent).
    """
    p = _p(paramstyle)
    cur = conn.cursor()
    cur.execute(f"SELECT id, topic, envelope FROM {TABLE} WHERE sent_at = 0 ORDER BY id LIMIT {int(limit)}")
    rows = cur.fetchall()
    conn.commit()
    for row_id, topic, body in rows:
        env = decode(bytes(body))
        if tracer is None:
            publisher.publish(topic, env)
        else:
            with tracer.publish(topic, env):
                publisher.publish(topic, env)
        conn.cursor().execute(f"UPDATE {TABLE} SET sent_at = {p} WHERE id = {p}", (int(time.time() * 1000), row_id))
        conn.commit()
    return len(rows)
