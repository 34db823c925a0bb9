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

CREATE_DEDUP_TABLE_MYSQL = (
    "CREATE TABLE IF NOT EXISTS msg_dedup ("
    "biz_key VARBINARY(1024) NOT NULL, handler VARBINARY(255) NOT NULL, message_id TEXT NOT NULL, "
    "payload_hash TEXT NOT NULL, created_at BIGINT NOT NULL, "
    "PRIMARY KEY (biz_key, handler), INDEX msg_dedup_created_at (created_at))"
)
"""The claim table on MySQL/MariaDB (InnoDB), as the Go and Java runtimes create it.

Keys are VARBINARY (compared as bytes, within InnoDB's 3072-byte key
limit); the index is inline because MySQL has no CREATE INDEX IF NOT EXISTS.
"""

DEDUP_INSERT_MYSQL = (
    "INSERT INTO msg_dedup (biz_key, handler, message_id, payload_hash, created_at) "
    "VALUES (%s, %s, %s, %s, %s)"
)
"""The claim INSERT on MySQL/MariaDB (PyMySQL, mysqlclient: format paramstyle).

A duplicate fails with error 1062, which rolls back the statement only; the
transaction goes on. INSERT IGNORE would truncate a too-long key instead
of failing, and ON DUPLICATE KEY UPDATE reports a duplicate as one row
under the drivers' "found rows" mode.
"""

_MYSQL_DUPLICATE_KEY = 1062


def driver(conn: Any) -> str:
    """The top-level package of conn's class: the database driver it comes from ("pymysql", "asyncpg", ...)."""
    return type(conn).__module__.split(".", 1)[0]


def is_mysql(conn: Any) -> bool:
    """Whether conn is a PyMySQL or mysqlclient (MySQLdb) connection."""
    return driver(conn) in ("pymysql", "MySQLdb")


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
    if is_mysql(conn):
        cur.execute(CREATE_DEDUP_TABLE_MYSQL)
    else:
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
    """Inserts the claim in conn's current transaction; False means a duplicate.

    On a MySQL connection (see is_mysql) paramstyle is not used.
    """
    cur = conn.cursor()
    args = (biz_key, handler, message_id, payload_hash, created_at_ms)
    if is_mysql(conn):
        try:
            cur.execute(DEDUP_INSERT_MYSQL, args)
        except Exception as e:  # the driver's IntegrityError; its first arg is MySQL's error code
            if e.args[:1] == (_MYSQL_DUPLICATE_KEY,):
                return False
            raise
        return True
    cur.execute(dedup_insert_sql(paramstyle), args)
    return bool(cur.rowcount == 1)
