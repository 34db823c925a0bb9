"""RocketMQTxProducer on a real broker: transactional (half) messages committed with the business transaction,
check-backs answered from msg_tx_check (runtime-go's tx_test.go). The test broker checks an unresolved half message
back after 2 s and every 2 s (scripts/rocketmq-start.sh)."""

from __future__ import annotations

import dataclasses
import pathlib
import queue
import sqlite3
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pytest

import msgcontract_runtime as mc
from conftest import GROUP, TOPIC, note_spec, peer, run
from msgcontract_runtime import rocketmq as mq, txcheck
from msgcontract_runtime.txcheck import Answer
from rmqhelp import envelope, sqlite_db

TX_TOPIC = "payments"
QUIET_S = 5.0
"""Long enough to see a message that should not arrive: check-backs come 2 s after a send, then every 2 s."""


class TxFixture:
    """A business database with msg_tx_check and a table of effects, the TRANSACTION topic TX_TOPIC, and a
    consumer loop of it (its own database) started before anything is sent."""

    def __init__(self, tmp_path: pathlib.Path, cfg: mq.Config) -> None:
        run(peer(cfg.namespace, "topics", "-tx-topic", TX_TOPIC))
        self.cfg = cfg
        self.path = str(tmp_path / "business.db")
        self.db = self.connect()
        txcheck.migrate(self.db)
        self.db.execute("CREATE TABLE payments (message_id TEXT PRIMARY KEY)")
        self.db.commit()
        self.spec = dataclasses.replace(note_spec(), topic=TX_TOPIC)
        self.got: list[Any] = []
        self.loop = mq.RocketMQConsumerLoop(cfg, GROUP, [mc.Consumer(self.spec, "record-effect", self.handle)],
                                            sqlite_db(str(tmp_path / "consumer.db")))
        self.producers: list[mq.RocketMQTxProducer] = []

    def connect(self) -> sqlite3.Connection:
        return sqlite3.connect(self.path, timeout=30)

    def handle(self, conn: Any, m: Any, env: Any) -> None:
        self.got.append(env)

    def producer(self, unresolved_ms: int = txcheck.DEFAULT_UNRESOLVED_MS,
                 clock_ms: Callable[[], int] = lambda: int(time.time() * 1000),
                 topics: Sequence[str] = (TX_TOPIC,), conn: Any = None) -> mq.RocketMQTxProducer:
        p = mq.RocketMQTxProducer(self.cfg, topics, conn or self.db, self.connect, unresolved_ms=unresolved_ms,
                                  clock_ms=clock_ms)
        self.producers.append(p)
        return p

    def envelope(self, key: str) -> Any:
        return envelope(self.spec, key)

    @staticmethod
    def effect(env: Any) -> Callable[[Any], None]:
        """The business change: one row per message."""
        def work(conn: Any) -> None:
            conn.execute("INSERT INTO payments (message_id) VALUES (?)", (env.message_id,))
        return work

    def rows(self, table: str, message_id: str) -> int:
        n = self.connect().execute(f"SELECT count(*) FROM {table} WHERE message_id = ?", (message_id,)).fetchone()
        return int(n[0])

    def received(self, quiet_s: float, want: int = 0, limit_s: float = 30) -> list[Any]:
        """The envelopes the loop handled: once want have arrived (within limit_s), and quiet_s more."""
        end = time.monotonic() + limit_s
        while len(self.got) < want:
            assert time.monotonic() < end, f"{len(self.got)} of {want} messages within {limit_s}s"
            self.loop.step()
        end = time.monotonic() + quiet_s
        while time.monotonic() < end:
            self.loop.step()
        assert self.loop.counts.deduped == 0, "a message came twice"
        return self.got

    def close(self) -> None:
        for p in self.producers:
            p.close()
        self.loop.close()


@pytest.fixture
def fx(tmp_path: pathlib.Path, cfg: mq.Config) -> Iterator[TxFixture]:
    f = TxFixture(tmp_path, cfg)
    yield f
    f.close()


class CommitThenFail:
    """A connection whose commit commits, then fails as if the answer was lost on the way."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def __getattr__(self, name: str) -> Any:
        return getattr(self.conn, name)

    def commit(self) -> None:
        self.conn.commit()
        raise sqlite3.OperationalError("disk I/O error")


def answers_until_final(checked: queue.Queue[Answer], limit_s: float = 30) -> list[Answer]:
    """The check-back answers up to the first that is not UNKNOWN."""
    seen: list[Answer] = []
    end = time.monotonic() + limit_s
    while not seen or seen[-1] == Answer.UNKNOWN:
        try:
            seen.append(checked.get(timeout=max(0.0, end - time.monotonic())))
        except queue.Empty:
            raise AssertionError(f"check-back answers {seen}: no COMMIT or ROLLBACK within {limit_s}s") from None
    return seen


def test_arguments_are_validated(fx: TxFixture) -> None:
    with pytest.raises(mq.ConfigError) as e:
        mq.RocketMQTxProducer(fx.cfg, ["ok", ""], None, None, paramstyle="numeric",  # type: ignore[arg-type]
                              unresolved_ms=3999)
    for want in ("topics ['ok', ''] must name the msgcontract topics", "conn is required", "connect must be",
                 "paramstyle 'numeric'", "unresolved_ms 3999 is under 4000"):
        assert want in str(e.value), (want, str(e.value))
    with pytest.raises(mq.ConfigError, match="endpoints is required"):
        mq.RocketMQTxProducer("", [TX_TOPIC], fx.db, fx.connect)
    p = fx.producer(topics=(TX_TOPIC, TOPIC))
    env = fx.envelope("order-0")
    ran: list[str] = []
    with pytest.raises(ValueError, match="'audit' is not one of the producer's topics"):
        p.send("audit", env, lambda conn: ran.append("audit"))
    env.message_id = ""
    with pytest.raises(ValueError, match="no message id"):
        p.send(TX_TOPIC, env, lambda conn: ran.append("no id"))
    # A NORMAL topic refuses a transactional message before the business transaction runs.
    with pytest.raises(mq.RocketMQError, match="needs a TRANSACTION topic.*did not run"):
        p.send(TOPIC, fx.envelope("order-0"), lambda conn: ran.append("normal topic"))
    assert ran == []


def test_a_committed_send_arrives_once(fx: TxFixture) -> None:
    p = fx.producer()
    env = fx.envelope("order-1")
    p.send(TX_TOPIC, env, fx.effect(env))
    assert (fx.rows("payments", env.message_id), fx.rows(txcheck.TABLE, env.message_id)) == (1, 1)
    got = fx.received(QUIET_S, want=1)
    assert got == [env], f"received {got}, want the sent envelope once"


def test_work_that_raises_rolls_both_back(fx: TxFixture) -> None:
    p = fx.producer()
    env = fx.envelope("order-2")
    refused = RuntimeError("insufficient funds")

    def work(conn: Any) -> None:
        fx.effect(env)(conn)
        raise refused

    with pytest.raises(RuntimeError) as e:
        p.send(TX_TOPIC, env, work)
    assert e.value is refused
    assert (fx.rows("payments", env.message_id), fx.rows(txcheck.TABLE, env.message_id)) == (0, 0)
    assert fx.received(QUIET_S) == []


def test_past_the_deadline_rolls_both_back(fx: TxFixture) -> None:
    skew = [0]
    p = fx.producer(clock_ms=lambda: int(time.time() * 1000) + skew[0])
    env = fx.envelope("order-3")

    def slow(conn: Any) -> None:
        fx.effect(env)(conn)
        skew[0] += txcheck.DEFAULT_UNRESOLVED_MS // 2  # half the window passes during the business change

    with pytest.raises(mq.RocketMQError, match="ran past half the unresolved window"):
        p.send(TX_TOPIC, env, slow)
    assert (fx.rows("payments", env.message_id), fx.rows(txcheck.TABLE, env.message_id)) == (0, 0)
    assert fx.received(QUIET_S) == []


def test_the_check_back_commits_a_verdict_lost_after_the_commit(fx: TxFixture) -> None:
    """A producer dies after the business transaction commits and before its verdict reaches the broker; another
    producer of the topic answers the check-back from the table, and the message arrives once."""
    crashing = fx.producer()
    crashing._crash = True
    env = fx.envelope("order-4")
    crashing.send(TX_TOPIC, env, fx.effect(env))
    crashing.close()
    checked: queue.Queue[Answer] = queue.Queue()
    fx.producer()._checked = checked
    assert fx.received(4, want=1) == [env]
    assert answers_until_final(checked) == [Answer.COMMIT]
    assert fx.rows("payments", env.message_id) == 1


def test_the_check_back_rolls_back_a_verdict_lost_after_the_rollback(fx: TxFixture) -> None:
    """A producer dies after the business transaction rolled back: the check-back answers UNKNOWN within the
    unresolved window, then ROLLBACK, and nothing arrives."""
    window = 6000
    crashing = fx.producer(unresolved_ms=window)
    crashing._crash = True
    env = fx.envelope("order-5")

    def refuse(conn: Any) -> None:
        raise RuntimeError("refused")

    with pytest.raises(RuntimeError, match="refused"):
        crashing.send(TX_TOPIC, env, refuse)
    crashing.close()
    checked: queue.Queue[Answer] = queue.Queue()
    fx.producer(unresolved_ms=window)._checked = checked
    seen = answers_until_final(checked)
    assert seen[0] == Answer.UNKNOWN and seen[-1] == Answer.ROLLBACK, \
        f"check-back answers {seen}: UNKNOWN within the window, then ROLLBACK"
    assert fx.received(QUIET_S) == []


def test_a_business_commit_that_fails_is_left_to_the_check_back(fx: TxFixture) -> None:
    """The business commit fails without saying whether it happened (here it did): send raises and leaves the half
    message unresolved, and the check-back, finding the row, commits it."""
    p = fx.producer(conn=CommitThenFail(fx.db))
    checked: queue.Queue[Answer] = queue.Queue()
    p._checked = checked
    env = fx.envelope("order-6")
    with pytest.raises(mq.RocketMQError, match="disk I/O error.*left to the broker's check-back"):
        p.send(TX_TOPIC, env, fx.effect(env))
    assert fx.received(4, want=1) == [env]
    assert answers_until_final(checked) == [Answer.COMMIT]
    assert (fx.rows("payments", env.message_id), fx.rows(txcheck.TABLE, env.message_id)) == (1, 1)
