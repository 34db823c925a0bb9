"""The dedup claim and the consumer on MySQL/MariaDB through PyMySQL.

Run by make test-mysql under scripts/with-mariadb.sh, which sets
MSGCONTRACT_MYSQL_DSN (mysql://user:password@host:port/db); each test gets a
database of its own. Not in the default testpaths: without the server the
tests fail rather than skip.
"""

from __future__ import annotations

import os
import secrets
import urllib.parse
from collections.abc import Iterator
from typing import Any

import pymysql
import pytest

import msgcontract_runtime as mc
import test_chain
from msgcontract_runtime.dedup import advance, chain_row
from test_runtime import SPEC, _body


def _connect(database: str | None = None) -> Any:
    dsn = os.environ.get("MSGCONTRACT_MYSQL_DSN")
    assert dsn, "MSGCONTRACT_MYSQL_DSN is unset: run under scripts/with-mariadb.sh (make test-mysql)"
    u = urllib.parse.urlparse(dsn)
    return pymysql.connect(host=u.hostname, port=u.port or 3306, user=u.username, password=u.password or "",
                           database=database, charset="utf8mb4", autocommit=False)


@pytest.fixture
def conn() -> Iterator[Any]:
    name = "t_py_" + secrets.token_hex(6)
    admin = _connect()
    admin.cursor().execute(f"CREATE DATABASE {name} CHARACTER SET utf8mb4")
    c = _connect(name)
    try:
        yield c
    finally:
        c.close()
        admin.cursor().execute(f"DROP DATABASE {name}")
        admin.close()


def test_claim_commits_and_rolls_back_with_the_transaction(conn: Any) -> None:
    assert mc.dedup.is_mysql(conn)
    mc.migrate(conn)
    mc.migrate(conn)  # idempotent
    assert mc.claim(conn, "order:1", "h", "m0", "p", 1)
    conn.rollback()
    assert mc.claim(conn, "order:1", "h", "m1", "p", 2), "a rolled-back claim must not block"
    conn.commit()
    # The duplicate fails its statement only: the transaction goes on.
    assert not mc.claim(conn, "order:1", "h", "m2", "p", 3)
    assert mc.claim(conn, "order:2", "h", "m3", "p", 4)
    conn.commit()
    cur = conn.cursor()
    cur.execute("SELECT message_id FROM msg_dedup ORDER BY created_at")
    assert cur.fetchall() == (("m1",), ("m3",))


def test_keys_are_bytes(conn: Any) -> None:
    mc.migrate(conn)
    for k in ("order:a", "order:A", "order:a ", "order:\u00e4"):
        assert mc.claim(conn, k, "h", "m", "p", 1), k
    conn.commit()


def test_failed_handler_rolls_back_its_claim(conn: Any) -> None:
    mc.migrate(conn)
    calls: list[str] = []

    def handle(tx: Any, m: Any, e: Any) -> None:
        calls.append(m.range)
        if len(calls) == 1:
            raise RuntimeError("first attempt fails")

    c = mc.Consumer(SPEC, "h", handle)
    body = _body("a")
    assert isinstance(c.process(conn, body), mc.DeadLetter)
    assert c.process(conn, body) == mc.Ack(), "the failed attempt's claim must have been rolled back"
    assert c.process(conn, body) == mc.Ack(deduplicated=True)
    assert calls == ["a", "a"]


def test_advance_walk(conn: Any) -> None:
    """dedup.advance's walk on PyMySQL: a step that finds its own row changes no row (MySQL counts changed
    rows) and is read back; the duplicate-key error is the row already there."""
    mc.migrate(conn)
    test_chain.check_walk(lambda s: advance(conn, s), lambda h, m: chain_row(conn, h, m))


def test_a_forked_chain_is_retried_and_dead_lettered_once(conn: Any) -> None:
    mc.migrate(conn)
    test_chain.test_a_forked_chain_is_retried_and_dead_lettered_once(conn)


def test_what_is_looked_up(conn: Any) -> None:
    mc.migrate(conn)
    test_chain.test_what_is_looked_up(conn)
