"""The dedup claim on a DB-API connection: the msg_dedup table shared with Go and Java.

Beside it, the retry chain table msg_dedup_chain (docs/DESIGN.md, "One retry
chain per message"): on a transport whose retry is a published copy followed
by a separate settle (Kafka, NATS JetStream), a crash between the two
delivers the same copy again, and its next failure would publish a second
copy of the same attempt. The table keeps, per (handler, message_id), the
place (ChainPos: replay_count, retry_count, delivery id) of the copy that
last failed and went on to a retry or a dead letter; ``advance`` moves it
forward before a failure goes on, and a copy it refuses is settled like a
duplicate. The rule itself, ``consumer.superseded``, lives with the
consumer's other decisions.
"""

from __future__ import annotations

import dataclasses
import functools
import re
import sqlite3
from collections.abc import Sequence
from typing import Any

from msgcontract_runtime import ddl

DEDUP_TABLE = "msg_dedup"
"""The claim table, shared with the Go and Java runtimes."""

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
    """Creates the claim and retry chain tables and their indexes on a DB-API connection, and commits.

    The statements are contracts/sql's (ddl.statements), for the dialect of
    conn's driver (ddl.dialect).
    """
    cur = conn.cursor()
    for stmt in ddl.statements(ddl.dialect(conn), *ddl.DEDUP_TABLES):
        cur.execute(stmt)
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
            if is_duplicate_key(e):
                return False
            raise
        return True
    cur.execute(dedup_insert_sql(paramstyle), args)
    return bool(cur.rowcount == 1)


CHAIN_TABLE = DEDUP_TABLE + "_chain"
"""Each message's retry chain, shared with the Go and Java runtimes (the claim table's name + "_chain")."""

# The chain statements as runtime-go/dedup/chain.go writes them, with $n
# placeholders; chain_sql renders them for a driver.
_CHAIN_INSERT = (
    "INSERT INTO msg_dedup_chain (handler, message_id, replay_count, attempt, delivery_id, updated_at) "
    "VALUES ($1, $2, $3, $4, $5, $6)"
)
# superseded's complement, as a condition on the row; its parameters are
# numbered in order of first appearance: replay count, attempt, delivery
# id, time, handler, message id.
_CHAIN_ADVANCE = (
    "UPDATE msg_dedup_chain SET replay_count = $1, attempt = $2, delivery_id = $3, updated_at = $4 "
    "WHERE handler = $5 AND message_id = $6 AND (replay_count < $1 OR (replay_count = $1 AND "
    "(attempt < $2 OR (attempt = $2 AND delivery_id = $3))))"
)
_CHAIN_LOOKUP = "SELECT replay_count, attempt, delivery_id FROM msg_dedup_chain WHERE handler = $1 AND message_id = $2"


@dataclasses.dataclass(frozen=True)
class ChainPos:
    """A copy's place in its message's retry chain (runtime-go's dedup.ChainPos).

    replay_count and attempt are the envelope's replay_count and
    retry_count; delivery_id is the transport's id of the stored copy (Kafka:
    "<topic>/<partition>/<offset>", the topic as the broker names it; NATS:
    the Nats-Msg-Id), the same on every redelivery of it.
    """

    replay_count: int
    attempt: int
    delivery_id: str


@dataclasses.dataclass(frozen=True)
class ChainStep:
    """One failed copy about to go on to a retry or a dead letter."""

    handler: str
    message_id: str
    pos: ChainPos
    at_ms: int


@dataclasses.dataclass(frozen=True)
class Statement:
    """A statement rendered for one driver: its text and, per placeholder in turn, which $n it stands for."""

    sql: str
    order: tuple[int, ...]

    def args(self, *values: Any) -> tuple[Any, ...]:
        """The driver's parameters for the values of $1, $2, ..."""
        return tuple(values[i - 1] for i in self.order)


@dataclasses.dataclass(frozen=True)
class ChainSQL:
    """The chain statements for one driver; mysql: insert is a plain INSERT (see chain_sql)."""

    insert: Statement
    advance: Statement
    lookup: Statement
    mysql: bool

    def insert_args(self, st: ChainStep) -> tuple[Any, ...]:
        p = st.pos
        return self.insert.args(st.handler, st.message_id, p.replay_count, p.attempt, p.delivery_id, st.at_ms)

    def advance_args(self, st: ChainStep) -> tuple[Any, ...]:
        p = st.pos
        return self.advance.args(p.replay_count, p.attempt, p.delivery_id, st.at_ms, st.handler, st.message_id)

    def lookup_args(self, handler: str, message_id: str) -> tuple[Any, ...]:
        return self.lookup.args(handler, message_id)


def _render(sql: str, placeholder: str) -> Statement:
    """sql with every $n written as placeholder ("?", "%s"), or kept ("$n", asyncpg's style)."""
    order = tuple(int(n) for n in re.findall(r"\$(\d+)", sql))
    if placeholder == "$n":
        return Statement(sql, tuple(range(1, max(order) + 1)))
    return Statement(re.sub(r"\$\d+", placeholder, sql), order)


@functools.cache
def chain_sql(paramstyle: str) -> ChainSQL:
    """The chain statements for a DB-API paramstyle ("qmark", "format", "pyformat"), "mysql" (PyMySQL,
    aiomysql) or "$n" (asyncpg).

    The INSERT keeps an existing row (ON CONFLICT DO NOTHING: no row
    affected); on MySQL it is a plain INSERT whose duplicate-key error 1062
    means the row exists, as the claim's (ON DUPLICATE KEY UPDATE would count
    as one row under a driver's "found rows" mode).
    """
    if paramstyle == "mysql":
        ph, mysql = "%s", True
    elif paramstyle == "$n":
        ph, mysql = "$n", False
    else:
        ph = {"qmark": "?", "format": "%s", "pyformat": "%s"}.get(paramstyle, "")
        if not ph:
            raise ValueError(f"unsupported DB-API paramstyle {paramstyle!r}; use qmark, format or pyformat")
        mysql = False
    insert = _CHAIN_INSERT if mysql else _CHAIN_INSERT + " ON CONFLICT (handler, message_id) DO NOTHING"
    return ChainSQL(_render(insert, ph), _render(_CHAIN_ADVANCE, ph), _render(_CHAIN_LOOKUP, ph), mysql)


def is_duplicate_key(e: BaseException) -> bool:
    """Whether e is MySQL's duplicate-key error 1062 (PyMySQL, mysqlclient, aiomysql: the first arg is the code)."""
    return e.args[:1] == (_MYSQL_DUPLICATE_KEY,)


def went_on(went: ChainPos | None, step: ChainStep) -> tuple[bool, ChainPos]:
    """advance's last step, when neither statement changed a row: step goes on only if the row read back holds
    its place (MySQL counts changed rows only, so a row that already held exactly this place changed none);
    otherwise went is the place of the copy that went on.

    The row only moves forward (to a later replay or attempt; at one
    attempt its delivery id stays), so holding the place gives the answer
    runtime-go's not-Superseded(went, place) gives, without a second rule.
    """
    if went is None:
        raise RuntimeError("dedup: advance retry chain: the row was deleted meanwhile; "
                           "is the claims' retention shorter than a retry chain?")
    return went == step.pos, went


def _chain(conn: Any, paramstyle: str) -> ChainSQL:
    return chain_sql("mysql" if is_mysql(conn) else paramstyle)


def _exec(cur: Any, sql: str, args: tuple[Any, ...], mysql_insert: bool = False) -> int:
    """Runs sql on cur; returns the number of rows it changed.

    mysql_insert: MySQL's duplicate-key error is the row already there, no row changed (it rolls back the
    statement only; the transaction goes on).
    """
    try:
        cur.execute(sql, args)
    except Exception as e:
        if not (mysql_insert and is_duplicate_key(e)):
            raise
        return 0
    return int(cur.rowcount)


def begin(conn: Any) -> None:
    """Opens conn's transaction where the driver would not before a SAVEPOINT or a read.

    sqlite3 opens transactions only before data-changing statements, and a
    SAVEPOINT outside a transaction opens one that its RELEASE commits at
    once: an explicit BEGIN comes first (and several reads in it take the
    file's lock once). psycopg and MySQL drivers open a transaction at any
    first statement.
    """
    if isinstance(conn, sqlite3.Connection) and not conn.in_transaction:
        conn.execute("BEGIN")


def chain_row(conn: Any, handler: str, message_id: str, paramstyle: str = "qmark") -> ChainPos | None:
    """The place of the copy of (handler, message_id) that last went on (runtime-go's Store.ChainRow), read in a
    transaction of its own; None when there is none."""
    return chain_rows(conn, [(handler, message_id)], paramstyle)[0]


def chain_rows(conn: Any, keys: Sequence[tuple[str, str]], paramstyle: str = "qmark") -> list[ChainPos | None]:
    """chain_row of each (handler, message_id) of keys, read in one transaction of its own: a broker loop's
    batch of retry copies looks its chains up with one commit."""
    q = _chain(conn, paramstyle)
    out: list[ChainPos | None] = []
    cur = conn.cursor()
    try:
        begin(conn)
        for handler, message_id in keys:
            cur.execute(q.lookup.sql, q.lookup_args(handler, message_id))
            r = cur.fetchone()
            out.append(None if r is None else ChainPos(int(r[0]), int(r[1]), str(r[2])))
        conn.commit()
    except BaseException:
        conn.rollback()
        raise
    return out


def advance(conn: Any, step: ChainStep, paramstyle: str = "qmark") -> tuple[bool, ChainPos]:
    """Records that step's copy goes on to a retry or a dead letter, unless another copy went on instead.

    Returns (True, step's place) when it goes on, else (False, the place of
    the copy that went on); advance_all with one step, whose error it raises.
    """
    r = advance_all(conn, [step], paramstyle)[0]
    if isinstance(r, BaseException):
        raise r
    return r


def advance_all(conn: Any, steps: Sequence[ChainStep],
                paramstyle: str = "qmark") -> list[tuple[bool, ChainPos] | Exception]:
    """advance for each of steps, a broker loop's failed copies of one transaction, in one transaction of its
    own: per step, (True, its place) when it goes on, (False, the place of the copy that went on), or the error
    that step alone failed with. A failed transaction raises, and none of the steps went on.

    As runtime-go's Store.Advance: INSERT the place if the message has no
    row; else UPDATE to it where the row does not supersede it. The writes
    run on conn outside any business transaction (the failures rolled theirs
    back), in (handler, message_id) order so that two members advancing the
    same messages wait for each other instead of deadlocking, and commit
    once: every row is durable before any of the retries is published, and
    a crash in between delivers those copies again, which advance lets go on
    again (the same place). A step whose writes changed no row (superseded,
    or on MySQL, which counts changed rows only, a row already at exactly
    this place) reads the row back after the commit, in a read of its own.
    """
    q = _chain(conn, paramstyle)
    out: list[tuple[bool, ChainPos] | Exception] = []
    unchanged: set[int] = set()
    cur = conn.cursor()
    try:
        for i in sorted(range(len(steps)), key=lambda i: (steps[i].handler, steps[i].message_id)):
            st = steps[i]
            if _exec(cur, q.insert.sql, q.insert_args(st), mysql_insert=q.mysql) != 1 and \
                    _exec(cur, q.advance.sql, q.advance_args(st)) != 1:
                unchanged.add(i)
        conn.commit()
    except BaseException:
        conn.rollback()
        raise
    for i, st in enumerate(steps):
        if i not in unchanged:
            out.append((True, st.pos))
            continue
        try:
            out.append(went_on(chain_row(conn, st.handler, st.message_id, paramstyle), st))
        except Exception as e:  # that step's read back failed: it alone is handed back
            out.append(e)
    return out
