"""The DDL comes from contracts/sql: the package's files are the repository's, and migrate creates what they say."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest

import msgcontract_runtime as mc
from msgcontract_runtime import ddl, outbox, txcheck
from msgcontract_runtime.aio.sqlite import SQLiteDatabase, SQLiteQueue

TABLES = ["msg_dedup", "msg_dedup_conflict", "msg_dedup_chain", "msg_outbox", "msg_outbox_lock", "msg_tx_check"]
QUEUE_TABLES = ["mc_queue", "mc_subscriptions", "mc_dead_letter"]
"""The embedded SQLite transport's tables, in SQLite's file only."""


def contracts_sql() -> Path:
    """The repository's contracts/sql, found from this file up."""
    for d in Path(__file__).resolve().parents:
        if (d / "contracts" / "sql" / "sqlite.sql").is_file():
            return d / "contracts" / "sql"
    raise AssertionError(f"no contracts/sql above {__file__}")


def test_parse_splits_sections_and_statements() -> None:
    secs = ddl.parse("-- a comment\n\n-- table: a\n-- about a\nCREATE TABLE a (\n  x TEXT);\n"
                     "CREATE INDEX i\n  ON a (x);\n-- table: b\nINSERT INTO b VALUES (1);\n")
    assert secs == [ddl.Section("a", ("CREATE TABLE a ( x TEXT)", "CREATE INDEX i ON a (x)")),
                    ddl.Section("b", ("INSERT INTO b VALUES (1)",))]
    for bad in ("CREATE TABLE a (x TEXT);\n", "-- table: a\nCREATE TABLE a (x TEXT)\n",
                "-- table: a\nCREATE TABLE a (\n-- table: b\n"):
        with pytest.raises(ValueError):
            ddl.parse(bad)


@pytest.mark.parametrize("dialect", [ddl.SQLITE, ddl.POSTGRES, ddl.MYSQL])
def test_the_package_holds_the_files_with_every_table(dialect: str) -> None:
    import importlib.resources

    got = importlib.resources.files("msgcontract_runtime").joinpath("sql", f"{dialect}.sql").read_text("utf-8")
    assert got == (contracts_sql() / f"{dialect}.sql").read_text("utf-8")
    assert [s.table for s in ddl.file(dialect)] == TABLES + (QUEUE_TABLES if dialect == ddl.SQLITE else [])
    stmts = "\n".join(ddl.statements(dialect, *TABLES, names={"msg_dedup": "claims"}))
    assert "{{" not in stmts
    assert "CREATE TABLE IF NOT EXISTS claims (" in stmts and "claims_created_at" in stmts
    with pytest.raises(ValueError):
        ddl.statements(dialect, "no_such_table")


def schema(conn: sqlite3.Connection) -> list[str]:
    """Every table (columns, rowid) and index of a SQLite database and the outbox lock's rows, sorted."""
    out: list[str] = []
    objs = conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'").fetchall()
    for typ, name, table, sql in objs:
        if typ == "table":
            out.append(f"table {name} without_rowid={'WITHOUT ROWID' in sql}")
            info = conn.execute('SELECT cid, name, type, "notnull", dflt_value, pk FROM pragma_table_info(?)', (name,))
            for col in info:
                out.append(f"column {name} {col}")
            if name.endswith("_lock"):
                out += [f"row {name} {r}" for r in conn.execute(f"SELECT * FROM {name}")]
        elif typ == "index":
            cols = [r[0] for r in conn.execute("SELECT name FROM pragma_index_info(?) ORDER BY seqno", (name,))]
            out.append(f"index {name} on {table} {cols}")
    return sorted(out)


def from_file(path: Path, *tables: str) -> list[str]:
    """The schema that running the repository's sqlite.sql sections of tables creates."""
    secs = {s.table: s for s in ddl.parse((contracts_sql() / "sqlite.sql").read_text("utf-8"))}
    conn = sqlite3.connect(path)
    for t in tables:
        for s in secs[t].statements:
            conn.execute(s.replace("{{", "").replace("}}", ""))
    conn.commit()
    return schema(conn)


def test_migrate_creates_what_the_file_says(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "sync.db")
    for _ in range(2):  # again: a no-op
        mc.migrate(conn)
        outbox.migrate(conn)
        txcheck.migrate(conn)
    got = schema(conn)
    assert got == from_file(tmp_path / "file.db", "msg_dedup", "msg_dedup_chain", "msg_outbox", "msg_outbox_lock",
                            "msg_tx_check")
    assert "table msg_dedup without_rowid=True" in got
    assert [line for line in got if line.startswith("table ")] == [
        "table msg_dedup without_rowid=True", "table msg_dedup_chain without_rowid=False",
        "table msg_outbox without_rowid=False", "table msg_outbox_lock without_rowid=False",
        "table msg_tx_check without_rowid=False"]


def test_async_sqlite_creates_what_the_file_says(tmp_path: Path) -> None:
    async def main() -> None:
        db = await SQLiteDatabase.open(str(tmp_path / "aio.db"), 1)
        await db.close()
        q = await SQLiteQueue.open(str(tmp_path / "aio.db"))
        await q.close()

    asyncio.run(main())
    got = schema(sqlite3.connect(tmp_path / "aio.db"))
    assert got == from_file(tmp_path / "file.db", "msg_dedup", "msg_dedup_chain", *QUEUE_TABLES)


def test_dialect_by_driver() -> None:
    assert ddl.dialect(sqlite3.connect(":memory:")) == ddl.SQLITE
