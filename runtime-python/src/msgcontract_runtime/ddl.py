"""The runtime's CREATE statements from their one home, contracts/sql/<dialect>.sql.

The package ships the files as package data (msgcontract_runtime/sql links to
contracts/sql), which the Go and Java runtimes read too (docs/DESIGN.md, "The
runtime's tables"). A file is a list of sections, one per table, in creation
order: a ``-- table: <name>`` line starts one; each statement ends with ``;``
at the end of a line; other lines starting with ``--`` are comments.
``{{<name>}}`` stands for the name given to the table <name>, here its
default name unless ``names`` says otherwise.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib.resources
import re
from collections.abc import Mapping
from typing import Any

SQLITE = "sqlite"
POSTGRES = "postgres"
MYSQL = "mysql"

DEDUP_TABLES = ("msg_dedup", "msg_dedup_chain")
"""The sections dedup.migrate and the asyncio databases create: the claim and retry chain tables."""

OUTBOX_TABLES = ("msg_outbox", "msg_outbox_lock")
"""The sections outbox.migrate creates: the outbox and its relays' lock."""

QUEUE_TABLES = ("mc_queue", "mc_subscriptions", "mc_dead_letter")
"""The embedded SQLite transport's tables (aio.sqlite.SQLiteQueue), in SQLite's file only."""

_HEADER = "-- table: "
_PLACEHOLDER = re.compile(r"\{\{([A-Za-z0-9_]*)\}\}")


@dataclasses.dataclass(frozen=True)
class Section:
    """One table's statements as the file holds them: in file order, without ``;``, one line each, placeholders kept."""

    table: str
    statements: tuple[str, ...]


def parse(text: str) -> list[Section]:
    """Splits a file's text into its sections; ValueError when a statement is outside a section or lacks ``;``."""
    secs: list[tuple[str, list[str]]] = []
    stmt: list[str] = []
    for i, raw in enumerate(text.split("\n"), 1):
        line = raw.strip()
        if line.startswith(_HEADER):
            if stmt:
                raise ValueError(f'ddl: line {i}: a statement before it has no ";"')
            secs.append((line[len(_HEADER):].strip(), []))
        elif not line or line.startswith("--"):
            continue
        elif not secs:
            raise ValueError(f'ddl: line {i}: a statement before the first "{_HEADER}" line')
        else:
            stmt.append(line)
            if line.endswith(";"):
                secs[-1][1].append(" ".join(stmt)[:-1].strip())
                stmt = []
    if stmt:
        raise ValueError('ddl: the last statement has no ";"')
    return [Section(t, tuple(s)) for t, s in secs]


@functools.cache
def file(dialect: str) -> tuple[Section, ...]:
    """The sections of a dialect's file (SQLITE, POSTGRES or MYSQL), read from the package."""
    if dialect not in (SQLITE, POSTGRES, MYSQL):
        raise ValueError(f"ddl: unknown dialect {dialect!r}; use sqlite, postgres or mysql")
    text = importlib.resources.files("msgcontract_runtime").joinpath("sql", f"{dialect}.sql").read_text("utf-8")
    return tuple(parse(text))


def statements(dialect: str, *tables: str, names: Mapping[str, str] | None = None) -> list[str]:
    """The statements that create tables (by default name) on dialect, in order, ready to run.

    names maps a table's default name to the name to give it; a table not in
    names keeps its default name.
    """
    secs = file(dialect)
    known = {s.table for s in secs}
    names = names or {}

    def name(m: re.Match[str]) -> str:
        t = m.group(1)
        if t not in known:
            raise ValueError(f"ddl: contracts/sql/{dialect}.sql: {m.group(0)} names no table of the file")
        return names.get(t, t)

    out: list[str] = []
    for t in tables:
        sec = next((s for s in secs if s.table == t), None)
        if sec is None:
            raise ValueError(f"ddl: contracts/sql/{dialect}.sql has no table {t}")
        out.extend(_PLACEHOLDER.sub(name, s) for s in sec.statements)
    return out


def create(conn: Any, postgres: bool, *tables: str) -> None:
    """Creates tables (by default name) on a DB-API connection if missing, and commits: outbox.migrate's and
    txcheck.migrate's rule. The dialect is MYSQL for a MySQL driver's connection (dialect), else POSTGRES when
    postgres is true, else SQLITE."""
    d = MYSQL if dialect(conn) == MYSQL else POSTGRES if postgres else SQLITE
    cur = conn.cursor()
    for stmt in statements(d, *tables):
        cur.execute(stmt)
    conn.commit()


def dialect(conn: Any) -> str:
    """The dialect of a DB-API or asyncio driver's connection, by the driver's package.

    PyMySQL, mysqlclient and aiomysql are MYSQL; sqlite3 and aiosqlite (any
    driver named *sqlite*) SQLITE; any other driver (psycopg, asyncpg, ...)
    POSTGRES.
    """
    d = type(conn).__module__.split(".", 1)[0]
    if d in ("pymysql", "MySQLdb", "aiomysql"):
        return MYSQL
    if "sqlite" in d:
        return SQLITE
    return POSTGRES
