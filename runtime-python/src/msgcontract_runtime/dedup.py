"""The dedup claim on a DB-API connection: the msg_dedup table shared with Go and Java."""

from __future__ import annotations

from typing import Any

DEDUP_TABLE = "msg_dedup"
"""The claim table, shared with the Go and Java runtimes."""

CREATE_DEDUP_TABLE = (
    "CREATE TABLE IF NOT EXISTS msg_dedup ("
    "biz_key TEXT NOT NULL, handler TEXT NOT NULL, message_id TEXT NOT NULL, "
    "payload_hash TEXT NOT NULL, created_at BIGINT NOT NULL, "
    "PRIMARY KEY (biz_key, handler))"
)
CREATE_DEDUP_INDEX = "CREATE INDEX IF NOT EXISTS msg_dedup_created_at ON msg_dedup (created_at)"


def dedup_insert_sql(paramstyle: str = "qmark") -> str:
    """The claim INSERT for a DB-API paramstyle ("qmark" for sqlite3, "format" or "pyformat" for psycopg).

    ON CONFLICT turns a duplicate into a no-op with rowcount 0 and keeps a
    PostgreSQL transaction usable, where a failed INSERT would abort it.
    """
    p = {"qmark": "?", "format": "%s", "pyformat": "%s"}.get(paramstyle)
    if p is None:
        raise ValueError(f"unsupported DB-API paramstyle {paramstyle!r}; use qmark, format or pyformat")
    return (
        "INSERT INTO msg_dedup (biz_key, handler, message_id, payload_hash, created_at) "
        f"VALUES ({p}, {p}, {p}, {p}, {p}) ON CONFLICT (biz_key, handler) DO NOTHING"
    )


def migrate(conn: Any) -> None:
    """Creates the claim table and its index on a DB-API connection, and commits."""
    cur = conn.cursor()
    cur.execute(CREATE_DEDUP_TABLE)
    cur.execute(CREATE_DEDUP_INDEX)
    conn.commit()


def claim(
    conn: Any,
    biz_key: str,
    handler: str,
    message_id: str,
    payload_hash: str,
    created_at_ms: int,
    paramstyle: str = "qmark",
) -> bool:
    """Inserts the claim in conn's current transaction; False means a duplicate."""
    cur = conn.cursor()
    cur.execute(dedup_insert_sql(paramstyle), (biz_key, handler, message_id, payload_hash, created_at_ms))
    return bool(cur.rowcount == 1)
