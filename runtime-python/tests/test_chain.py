"""One retry chain per message (docs/DESIGN.md): the rule, dedup.advance's walk, and both consumers using it.

The walk runs on sqlite3 and psycopg (the synchronous consumer's
drivers) and on aiosqlite and asyncpg (the asyncio consumer's);
tests_mysql/test_dedup_mysql.py runs it on MariaDB.
"""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

import msgcontract_runtime as mc
from aio_support import SPEC as ASYNC_SPEC, Database, envelope, open_db
from conftest import pg_dsn
from msgcontract.v1 import envelope_pb2
from msgcontract_runtime import aio
from msgcontract_runtime.consumer import Routed, begin, process_batch, run_routed, superseded
from msgcontract_runtime.dedup import (
    ChainPos,
    ChainStep,
    advance,
    advance_all,
    chain_row,
    chain_rows,
    chain_sql,
    went_on,
)
from test_runtime import SPEC, _body

Run = Callable[..., Any]


def pos(replays: int, attempt: int, delivery_id: str) -> ChainPos:
    return ChainPos(replays, attempt, delivery_id)


def test_superseded_rule() -> None:
    """superseded(went, copy): runtime-go's table of cases (dedup/chain_test.go, TestSuperseded)."""
    for name, went, cur, want in [
        ("the first delivery redelivered before it went on", pos(0, 0, "T/0/1"), pos(0, 0, "T/0/1"), False),
        ("a producer's duplicate of a first delivery that went on", pos(0, 0, "T/0/1"), pos(0, 0, "T/1/8"), True),
        ("the first delivery redelivered after its retry went on", pos(0, 1, "R/0/4"), pos(0, 0, "T/0/1"), True),
        ("a later attempt went on", pos(0, 3, "R/1/7"), pos(0, 2, "R/1/5"), True),
        ("this attempt went on under another copy", pos(0, 2, "R/1/5"), pos(0, 2, "R/1/6"), True),
        ("this copy went on (redelivered)", pos(0, 2, "R/1/5"), pos(0, 2, "R/1/5"), False),
        ("an earlier attempt went on", pos(0, 1, "R/0/2"), pos(0, 2, "R/1/5"), False),
        ("a replay after the chain died", pos(0, 3, "R/0/9"), pos(1, 0, "R/0/12"), False),
        ("a stale copy of the chain before the replay", pos(1, 0, "R/0/12"), pos(0, 3, "R/0/9"), True),
        ("a later attempt of the replay", pos(1, 0, "R/0/12"), pos(1, 1, "R/0/13"), False),
    ]:
        assert superseded(went, cur) == want, name


GO_ADVANCE = ("UPDATE msg_dedup_chain SET replay_count = $1, attempt = $2, delivery_id = $3, updated_at = $4 "
              "WHERE handler = $5 AND message_id = $6 AND (replay_count < $1 OR (replay_count = $1 AND "
              "(attempt < $2 OR (attempt = $2 AND delivery_id = $3))))")
"""runtime-go/dedup/chain.go's conditional UPDATE, for the default table name."""


def test_chain_statements_are_the_go_runtimes() -> None:
    """runtime-go's text, rendered per driver with the arguments in placeholder order."""
    pg = chain_sql("$n")
    assert pg.advance.sql == GO_ADVANCE
    assert pg.insert.sql == (
        "INSERT INTO msg_dedup_chain (handler, message_id, replay_count, attempt, delivery_id, updated_at) "
        "VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (handler, message_id) DO NOTHING")
    assert pg.lookup.sql == ("SELECT replay_count, attempt, delivery_id FROM msg_dedup_chain "
                             "WHERE handler = $1 AND message_id = $2")
    step = ChainStep("h", "m", pos(1, 2, "t/0/7"), 99)
    assert pg.insert_args(step) == ("h", "m", 1, 2, "t/0/7", 99)
    assert pg.advance_args(step) == (1, 2, "t/0/7", 99, "h", "m")
    q = chain_sql("qmark")
    want = GO_ADVANCE
    for n in range(1, 7):
        want = want.replace(f"${n}", "?")
    assert q.advance.sql == want
    assert q.advance_args(step) == (1, 2, "t/0/7", 99, "h", "m", 1, 1, 2, 2, "t/0/7")
    my = chain_sql("mysql")
    assert my.mysql and "ON CONFLICT" not in my.insert.sql and my.insert.sql.count("%s") == 6
    with pytest.raises(ValueError):
        chain_sql("named")


def test_went_on_needs_the_row() -> None:
    step = ChainStep("h", "m", pos(0, 1, "p"), 1)
    assert went_on(pos(0, 1, "p"), step) == (True, pos(0, 1, "p"))
    assert went_on(pos(0, 1, "q"), step) == (False, pos(0, 1, "q"))
    with pytest.raises(RuntimeError, match="the row was deleted meanwhile"):
        went_on(None, step)


WALK = [
    # (message, place, what advance returns, why): runtime-go's testAdvance, its cleanup aside (Python has none)
    ("m1", pos(0, 0, "T/0/1"), (True, pos(0, 0, "T/0/1")), "no row: inserted"),
    ("m1", pos(0, 0, "T/0/1"), (True, pos(0, 0, "T/0/1")), "redelivered: the same values"),
    ("m1", pos(0, 0, "T/1/3"), (False, pos(0, 0, "T/0/1")), "a producer's duplicate"),
    ("m1", pos(0, 1, "R/0/4"), (True, pos(0, 1, "R/0/4")), "the retry copy"),
    ("m1", pos(0, 1, "R/0/5"), (False, pos(0, 1, "R/0/4")), "the fork stops"),
    ("m1", pos(0, 1, "R/0/4"), (True, pos(0, 1, "R/0/4")), "the copy that went on, again"),
    ("m1", pos(0, 0, "T/0/1"), (False, pos(0, 1, "R/0/4")), "the first delivery, after its retry went on"),
    ("m1", pos(0, 2, "R/0/9"), (True, pos(0, 2, "R/0/9")), "the next attempt"),
    ("m1", pos(0, 1, "R/0/4"), (False, pos(0, 2, "R/0/9")), "overtaken"),
    ("m2", pos(0, 1, "R/0/5"), (True, pos(0, 1, "R/0/5")), "another message's chain is its own"),
    ("m1", pos(1, 0, "R/1/2"), (True, pos(1, 0, "R/1/2")), "a replay starts afresh"),
    ("m1", pos(0, 3, "R/0/11"), (False, pos(1, 0, "R/1/2")), "a stale copy from before the replay"),
    ("m1", pos(1, 1, "R/1/3"), (True, pos(1, 1, "R/1/3")), "the replay's retry"),
]
"""dedup.advance's answers along one message's copies. Every step is at the same instant, so that on MySQL
(which counts changed rows) a step that finds its own row changes nothing and is read back."""

FINAL = {"m1": pos(1, 1, "R/1/3"), "m2": pos(0, 1, "R/0/5")}


def walk() -> tuple[str, list[tuple[ChainStep, tuple[bool, ChainPos], str]]]:
    """WALK's steps, on message ids of their own (a suffix), and the suffix."""
    sfx = "-" + uuid.uuid4().hex
    return sfx, [(ChainStep("h", m + sfx, p, 1_900_000_000_000), want, why) for m, p, want, why in WALK]


def check_walk(adv: Callable[[ChainStep], tuple[bool, ChainPos]],
               read: Callable[[str, str], ChainPos | None]) -> None:
    """Runs WALK through adv and checks every answer and the rows left."""
    sfx, steps = walk()
    assert read("h", "m1" + sfx) is None
    for step, want, why in steps:
        assert adv(step) == want, why
    assert {m: read("h", m + sfx) for m in FINAL} == FINAL


@pytest.fixture(params=["sqlite", "postgres"])
def sync_conn(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Any, str]]:
    """A business database on the synchronous consumer's drivers, migrated, with its paramstyle."""
    if request.param == "sqlite":
        c: Any = sqlite3.connect(str(tmp_path / "biz.db"))
        style = "qmark"
    else:
        c = psycopg.connect(pg_dsn())
        style = "format"
    try:
        mc.migrate(c)
        yield c, style
    finally:
        c.close()


def test_advance_walk(sync_conn: tuple[Any, str]) -> None:
    conn, style = sync_conn
    check_walk(lambda s: advance(conn, s, style), lambda h, m: chain_row(conn, h, m, style))


def test_advance_commits(sync_conn: tuple[Any, str], tmp_path: Path) -> None:
    """The row is durable once advance returns, seen from another connection; nothing is left open."""
    conn, style = sync_conn
    m = "m-" + uuid.uuid4().hex
    assert advance(conn, ChainStep("h", m, pos(0, 0, "t/0/1"), 5), style)[0]
    other: Any = sqlite3.connect(str(tmp_path / "biz.db")) if style == "qmark" else psycopg.connect(pg_dsn())
    try:
        assert chain_row(other, "h", m, style) == pos(0, 0, "t/0/1")
    finally:
        other.close()
    if style == "qmark":
        assert not conn.in_transaction
    else:
        assert conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE


def test_advance_all_is_one_transaction(sync_conn: tuple[Any, str], tmp_path: Path) -> None:
    """A batch's failures advance together: each gets advance's answer (a superseded step the place that went
    on), the rows are durable once it returns; a failing write rolls back every step's."""
    conn, style = sync_conn
    sfx = "-" + uuid.uuid4().hex
    assert advance(conn, ChainStep("h", "c" + sfx, pos(0, 2, "R/0/7"), 5), style)[0]
    steps = [ChainStep("h", "b" + sfx, pos(0, 0, "t/0/2"), 6),  # out of order: written sorted, answered in turn
             ChainStep("h", "a" + sfx, pos(0, 0, "t/0/1"), 6),
             ChainStep("h", "c" + sfx, pos(0, 1, "R/0/3"), 6)]  # a stale copy: attempt 2 went on
    assert advance_all(conn, steps, style) == [(True, pos(0, 0, "t/0/2")), (True, pos(0, 0, "t/0/1")),
                                               (False, pos(0, 2, "R/0/7"))]
    other: Any = sqlite3.connect(str(tmp_path / "biz.db")) if style == "qmark" else psycopg.connect(pg_dsn())
    try:
        assert [chain_row(other, "h", m + sfx, style) for m in "abc"] == [
            pos(0, 0, "t/0/1"), pos(0, 0, "t/0/2"), pos(0, 2, "R/0/7")]
    finally:
        other.close()
    if style == "qmark":
        assert not conn.in_transaction
    # A step whose write fails: the steps written before it in the same transaction are rolled back too.
    if style == "qmark":  # PostgreSQL refuses the NUL in the message id; SQLite's trigger refuses the id
        conn.execute("CREATE TRIGGER refuse BEFORE INSERT ON msg_dedup_chain WHEN NEW.message_id LIKE 'z%' "
                     "BEGIN SELECT RAISE(ABORT, 'refused'); END")
        conn.commit()
    with pytest.raises(Exception, match="refused|NUL"):
        advance_all(conn, [ChainStep("h", "d" + sfx, pos(0, 0, "t/0/4"), 7),
                           ChainStep("h", "z\x00" + sfx, pos(0, 0, "t/0/5"), 7)], style)
    assert chain_row(conn, "h", "d" + sfx, style) is None, "rolled back with the step that failed"


def test_chain_rows_read_together(sync_conn: tuple[Any, str]) -> None:
    """chain_rows answers as chain_row does for each key, in one read that leaves nothing open."""
    conn, style = sync_conn
    sfx = "-" + uuid.uuid4().hex
    assert advance(conn, ChainStep("h", "a" + sfx, pos(0, 1, "R/0/1"), 5), style)[0]
    assert advance(conn, ChainStep("g", "a" + sfx, pos(1, 0, "R/0/2"), 5), style)[0]
    keys = [("h", "a" + sfx), ("h", "none" + sfx), ("g", "a" + sfx)]
    assert chain_rows(conn, keys, style) == [pos(0, 1, "R/0/1"), None, pos(1, 0, "R/0/2")]
    assert chain_rows(conn, keys, style) == [chain_row(conn, h, m, style) for h, m in keys]
    assert chain_rows(conn, [], style) == []
    if style == "qmark":
        assert not conn.in_transaction
    else:
        assert conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE


def test_run_routed_looks_a_batch_up_at_once(conn: sqlite3.Connection) -> None:
    """run_routed reads the chains of a batch's retry copies together: the stale copy is settled as a
    duplicate, its handler never runs, and the copy ahead of the row runs; when that read fails, every copy
    runs (the advance decides again when they fail)."""
    seen: list[mc.Outcome] = []
    calls: list[int] = []
    c = _failing(seen, calls)
    first = c.process(conn, _body("batch"), "t/0/1")
    other = c.process(conn, _body("other"), "t/0/2")
    assert isinstance(first, mc.Retry) and isinstance(other, mc.Retry)
    went = _due(first)
    assert isinstance(c.process(conn, went, "t.r/0/1"), mc.DeadLetter)  # attempt 1 went on as t.r/0/1
    stale, ahead = _due(first), _due(other)

    def todo(*copies: tuple[str, bytes, str]) -> list[tuple[str, Routed[Any], str]]:
        return [(name, Routed(SPEC.topic, b, mc.decode(b), c), did) for name, b, did in copies]

    calls.clear()
    res = run_routed(conn, todo(("stale", stale, "t.r/0/7"), ("ahead", ahead, "t.r/0/8")))
    assert res.superseded == ["stale"]
    assert [(d, type(dec)) for d, _, dec in res.decided] == [("ahead", mc.DeadLetter)]
    assert calls == [1], "the stale copy's handler never ran"
    assert not conn.in_transaction
    conn.execute("ALTER TABLE msg_dedup_chain RENAME TO gone")
    conn.commit()
    calls.clear()
    res = run_routed(conn, todo(("stale", stale, "t.r/0/7")))
    assert res.superseded == [] and calls == [1], "a failed look-up lets the copy run"


def test_process_batch_advances_its_failures_together(conn: sqlite3.Connection) -> None:
    """A batch of two failures and a success: both chains advance in one transaction after the batch's commit;
    when that transaction fails, both failures are handed back (None) and the success stands."""
    ok = mc.Consumer(SPEC, "ok", lambda tx, m, e: None)
    seen: list[mc.Outcome] = []
    bad = _failing(seen, [])
    bodies = [_body("f1"), _body("s1"), _body("f2")]
    out = process_batch(conn, [(bad, bodies[0], "t/0/1"), (ok, bodies[1], "t/0/2"), (bad, bodies[2], "t/0/3")])
    assert [type(d) for d in out] == [mc.Retry, mc.Ack, mc.Retry]
    assert [chain_row(conn, "h", mc.decode(b).message_id) for b in (bodies[0], bodies[2])] == [
        pos(0, 0, "t/0/1"), pos(0, 0, "t/0/3")]
    assert [o.label for o in seen] == ["retry_scheduled", "retry_scheduled"]
    conn.execute("CREATE TRIGGER refuse BEFORE INSERT ON msg_dedup_chain BEGIN SELECT RAISE(ABORT, 'refused'); END")
    conn.commit()
    bodies = [_body("f3"), _body("s2"), _body("f4")]
    out = process_batch(conn, [(bad, bodies[0], "t/0/4"), (ok, bodies[1], "t/0/5"), (bad, bodies[2], "t/0/6")])
    assert out == [None, mc.Ack(), None]
    assert len(seen) == 2, "a delivery handed back is not observed"
    assert not conn.in_transaction


def _failing(seen: list[mc.Outcome], calls: list[int]) -> mc.Consumer[envelope_pb2.LastError]:
    """A consumer whose handler always fails retryably: SPEC retries once, then dead-letters."""

    def handler(tx: Any, m: envelope_pb2.LastError, e: envelope_pb2.Envelope) -> None:
        calls.append(e.retry_count)
        raise SPEC.rules.error(50301, "ledger down")

    return mc.Consumer(SPEC, "h", handler, clock_ms=lambda: 10_000, rand=lambda: 0.0, observer=seen.append)


def _due(d: mc.Decision) -> bytes:
    """The retry copy d publishes, due now."""
    assert isinstance(d, mc.Retry)
    d.next_envelope.not_before = 0
    return mc.encode(d.next_envelope)


def test_a_forked_chain_is_retried_and_dead_lettered_once(conn: Any) -> None:
    """A member published the retry copy, then died before its commit: the record comes again and fails
    again (the same delivery id: it goes on), publishing a second retry copy of attempt 1. The first of the
    two to fail goes on to the dead letter; the other is settled as deduplicated, looked up before its handler
    runs or, had the look-up missed it, after its failure."""
    seen: list[mc.Outcome] = []
    calls: list[int] = []
    c = _failing(seen, calls)
    body = _body("fork")
    first = c.process(conn, body, "t/0/5")
    again = c.process(conn, body, "t/0/5")  # the redelivery: its retry may not have been published
    assert isinstance(first, mc.Retry) and isinstance(again, mc.Retry)
    copy_a, copy_b = _due(first), _due(again)
    assert not c.drop_superseded(conn, copy_a, "t.r/0/1"), "nothing went on from attempt 1 yet"
    dead = c.process(conn, copy_a, "t.r/0/1")
    assert isinstance(dead, mc.DeadLetter) and dead.reason == "retries_exhausted"
    assert chain_row(conn, "h", mc.decode(body).message_id) == pos(0, 1, "t.r/0/1")
    n = len(seen)
    assert c.drop_superseded(conn, copy_b, "t.r/1/4")
    assert [o.label for o in seen[n:]] == ["deduplicated"]
    assert c.process(conn, copy_b, "t.r/1/4") == mc.Ack(deduplicated=True)
    assert seen[-1].label == "deduplicated"
    # The source, redelivered once more after its retry went on, stops too.
    assert c.process(conn, body, "t/0/5") == mc.Ack(deduplicated=True)
    assert calls == [0, 0, 1, 1, 0]
    labels = [o.label for o in seen]
    assert labels.count("dead_lettered") == 1 and labels.count("retry_scheduled") == 2


def test_without_a_delivery_id_there_is_no_chain(conn: sqlite3.Connection) -> None:
    """Transports that settle atomically pass no delivery id: no chain row, no look-up."""
    c = _failing([], [])
    body = _body("plain")
    assert isinstance(c.process(conn, body), mc.Retry)
    assert chain_row(conn, "h", mc.decode(body).message_id) is None


def test_what_is_looked_up(conn: Any) -> None:
    """A first delivery is never looked up (it costs nothing), nor a copy not due yet; a retry copy and a replay
    are. A producer's duplicate of a first delivery that went on stops once it fails."""
    c = _failing([], [])
    body = _body("early")
    retry = c.process(conn, body, "t/0/1")
    assert isinstance(retry, mc.Retry)
    assert not c.drop_superseded(conn, body, "t/0/2"), "a first delivery is not looked up"
    assert c.process(conn, body, "t/0/2") == mc.Ack(deduplicated=True), "a producer's duplicate stops"
    late = mc.encode(retry.next_envelope)  # not_before in the future
    assert not c.drop_superseded(conn, late, "t.r/0/9")
    assert not c.drop_superseded(conn, _due(retry), "t.r/0/1"), "attempt 1 is ahead of the row"
    env = mc.decode(body)
    env.replay_count = 1
    assert not c.drop_superseded(conn, mc.encode(env), "t.r/0/5"), "a replay starts afresh"
    assert isinstance(c.process(conn, mc.encode(env), "t.r/0/5"), mc.Retry)
    assert c.drop_superseded(conn, _due(retry), "t.r/0/1"), "a copy from before the replay is stale"


def test_a_shared_transaction_advances_after_its_commit(conn: sqlite3.Connection) -> None:
    """process_shared: the chain moves when the caller says the transaction committed, on its own statements;
    a copy superseded meanwhile is settled as deduplicated; a database failure there raises for that delivery."""
    seen: list[mc.Outcome] = []
    c = _failing(seen, [])
    body = _body("shared")
    first = c.process(conn, body, "t/0/5")
    copy_a, copy_b = _due(first), _due(first)  # the same bytes, stored twice
    assert isinstance(c.process(conn, copy_a, "t.r/0/1"), mc.DeadLetter)
    begin(conn)
    p = c.process_shared(conn, copy_b, "t.r/0/2")
    decided = p.decision
    assert isinstance(decided, mc.DeadLetter), "decided in the transaction"
    conn.commit()
    p.committed()
    assert p.decision == mc.Ack(deduplicated=True)
    assert seen[-1].label == "deduplicated"

    n = len(seen)
    conn.execute("DROP TABLE msg_dedup_chain")
    begin(conn)
    p = c.process_shared(conn, _body("no-table"), "t/0/8")
    conn.commit()
    with pytest.raises(sqlite3.OperationalError):
        p.committed()
    assert len(seen) == n, "a delivery handed back is not observed"
    with pytest.raises(sqlite3.OperationalError):
        c.process(conn, _body("no-table"), "t/0/8")
    assert not c.drop_superseded(conn, copy_b, "t.r/0/3"), "a failed look-up lets the copy run"


@pytest.fixture
def conn() -> sqlite3.Connection:
    c = sqlite3.connect(":memory:")
    mc.migrate(c)
    return c


@pytest.fixture(params=["sqlite", "postgres"])
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def where(kind: str, tmp_path: Path) -> str:
    return str(tmp_path / "biz.db") if kind == "sqlite" else pg_dsn()


def test_async_advance_walk(arun: Run, kind: str, where: str) -> None:
    """aio.advance: the same walk on aiosqlite and asyncpg (and aiomysql: tests_mysql), each statement in a
    transaction of its own."""

    async def main() -> None:
        db = await open_db(kind, where, 2, fresh=False)
        try:
            sfx, steps = walk()
            assert await aio.chain_row(db, "h", "m1" + sfx) is None
            for step, want, why in steps:
                assert await aio.advance(db, step) == want, why
            assert {m: await aio.chain_row(db, "h", m + sfx) for m in FINAL} == FINAL
        finally:
            await db.close()

    arun(main)


def test_async_consumer_keeps_one_chain(arun: Run, kind: str, where: str) -> None:
    """AsyncConsumer with delivery ids: a forked copy of attempt 1 is settled as deduplicated, looked up before
    its handler runs or, had the look-up missed it, stopped by the advance; the message is retried once per
    attempt."""
    seen: list[mc.Outcome] = []
    calls: list[int] = []

    async def handler(tx: Any, m: envelope_pb2.LastError, e: envelope_pb2.Envelope) -> None:
        calls.append(e.retry_count)
        raise ASYNC_SPEC.rules.error(50301, "down")

    c = aio.AsyncConsumer(ASYNC_SPEC, "h", handler, clock_ms=lambda: 10_000, rand=lambda: 0.0,
                          observer=seen.append)
    body = mc.encode(envelope("fork-" + uuid.uuid4().hex))

    async def no_look_up(db: Any, env: envelope_pb2.Envelope, delivery_id: str) -> bool:
        return False

    async def main() -> None:
        db: Database = await open_db(kind, where, 2, fresh=False)
        try:
            first = await c.process(db, body, "t/0/5")
            again = await c.process(db, body, "t/0/5")  # redelivered: its retry may not have been published
            copy_a, copy_b = _due(first), _due(again)
            assert isinstance(await c.process(db, copy_a, "t.r/0/1"), mc.Retry), "max_retries 2"
            assert await c.process(db, copy_b, "t.r/1/2") == mc.Ack(deduplicated=True)
            assert calls == [0, 0, 1], "looked up: the superseded copy's handler did not run"
            setattr(c, "_superseded", no_look_up)
            assert await c.process(db, copy_b, "t.r/1/2") == mc.Ack(deduplicated=True)
            assert calls == [0, 0, 1, 1]
            assert await aio.chain_row(db, "h", mc.decode(body).message_id) == pos(0, 1, "t.r/0/1")
        finally:
            await db.close()

    arun(main)
    assert [o.label for o in seen] == ["retry_scheduled"] * 3 + ["deduplicated"] * 2
