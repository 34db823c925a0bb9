"""msgcontract_runtime without generated code: LastError stands in for an event message."""

from __future__ import annotations

import sqlite3

import pytest

import msgcontract_runtime as mc
from msgcontract.v1 import envelope_pb2
from msgcontract_runtime.consumer import begin


def range_key(m: envelope_pb2.LastError) -> str:
    b = mc.BizKeyBuilder()
    b.literal("range:")
    b.string("range", m.range)
    return b.key()


SPEC = mc.EventContract(
    full_name="msgcontract.v1.LastError",
    topic="errors",
    event_type="ERROR_SEEN",
    biz_key_template="range:{range}",
    retry=mc.RetryPolicy(base_ms=1000, multiplier=2.0, jitter_ms=0, max_delay_ms=60000, max_retries=1),
    rules=mc.ErrorRules(ranges=(mc.ErrorRange(50000, 59999, True, "system"),), unclassified_retryable=False),
    target_state="",
    message_type=envelope_pb2.LastError,
    key_function=range_key,
)


def _body(rng: str) -> bytes:
    return mc.encode(mc.new_envelope(SPEC, envelope_pb2.LastError(range=rng), occurred_at_ms=1))


@pytest.fixture
def conn() -> sqlite3.Connection:
    c = sqlite3.connect(":memory:")
    mc.migrate(c)
    return c


def test_biz_key_encodes_values_not_literals() -> None:
    b = mc.BizKeyBuilder()
    b.literal("order_id:")
    b.string("order_id", "2025 01/01")
    b.literal(":")
    b.boolean(True)
    assert b.key() == "order_id:2025%2001%2F01:true"


def test_biz_key_errors() -> None:
    b = mc.BizKeyBuilder()
    b.string("a", "")
    b.fail("b")
    with pytest.raises(mc.BizKeyError) as e:
        b.key()
    assert (e.value.code, e.value.field) == (mc.BizKeyError.EMPTY_FIELD, "a")
    long = mc.BizKeyBuilder()
    long.string("f", " " * 171)
    with pytest.raises(mc.BizKeyError) as e:
        long.key()
    assert (e.value.code, e.value.length) == (mc.BizKeyError.KEY_TOO_LONG, 513)


def test_retry_policy() -> None:
    p = mc.RetryPolicy(base_ms=1000, multiplier=2.0, jitter_ms=1000, max_delay_ms=5000, max_retries=3)
    assert [p.base_delay(n) for n in (1, 3, 4)] == [1000, 4000, 5000]
    assert p.delay_ms(3, 0.9999) == 4999
    assert not p.dead_letter(3)
    assert p.dead_letter(4)


def test_error_rules() -> None:
    rules = mc.ErrorRules(
        ranges=(mc.ErrorRange(40000, 49999, False, "business"), mc.ErrorRange(50000, 59999, True, "system")),
        unclassified_retryable=True,
    )
    assert rules.classify(40000) == mc.Classification(False, "business")
    assert rules.classify(59999) == mc.Classification(True, "system")
    assert rules.classify(1) == mc.Classification(True, "")
    assert isinstance(rules.error(40001, "closed"), mc.NonRetryableError)
    assert isinstance(rules.error(50301, "down"), mc.RetryableError)


def test_state_machine() -> None:
    m = mc.StateMachine("shop.OrderState", {"PAYING": (), "PAID": ("PAYING",), "REFUNDED": ("PAID",)})
    assert m.can_transit("PAYING", "PAID") is mc.Transit.ALLOWED
    assert m.can_transit("PAID", "PAID") is mc.Transit.DUPLICATE
    assert m.can_transit("PAYING", "REFUNDED") is mc.Transit.ILLEGAL
    assert m.can_transit("NOPE", "PAID") is mc.Transit.ILLEGAL


def test_version_check() -> None:
    mc.require_version(mc.API_LEVEL, "mine")
    with pytest.raises(ImportError, match=r"mine was generated for .* upgrade"):
        mc.require_version(mc.API_LEVEL + 1, "mine")


def test_envelope_round_trips() -> None:
    env = mc.new_envelope(SPEC, envelope_pb2.LastError(range="r"), occurred_at_ms=7, json=True)
    assert env.biz_key == "range:r"
    assert mc.decode(mc.encode(env)) == env
    assert mc.decode_json(mc.encode_json(env)) == env
    assert mc.payload(SPEC, env).range == "r"
    with pytest.raises(mc.DecodeError):
        mc.decode(envelope_pb2.Envelope().SerializeToString())


def test_duplicate_runs_handler_once(conn: sqlite3.Connection) -> None:
    seen: list[str] = []
    c = mc.Consumer(SPEC, "h", lambda tx, m, e: seen.append(m.range))
    body = _body("a")
    assert c.process(conn, body) == mc.Ack()
    assert c.process(conn, body) == mc.Ack(deduplicated=True)
    assert seen == ["a"]
    assert conn.execute("SELECT COUNT(*) FROM msg_dedup").fetchone() == (1,)


def test_retry_then_dead_letter(conn: sqlite3.Connection) -> None:
    def fail(tx: object, m: envelope_pb2.LastError, e: envelope_pb2.Envelope) -> None:
        raise SPEC.rules.error(50301, "ledger down")

    c = mc.Consumer(SPEC, "h", fail, clock_ms=lambda: 10_000, rand=lambda: 0.0)
    retry = c.process(conn, _body("b"))
    assert isinstance(retry, mc.Retry)
    assert retry.delay_ms == 1000
    assert retry.next_envelope.retry_count == 1
    assert retry.next_envelope.last_error.code == 50301
    retry.next_envelope.not_before = 0
    dl = c.process(conn, mc.encode(retry.next_envelope))
    assert dl == mc.DeadLetter("retries_exhausted", 50301, "code 50301: ledger down", 2)


def test_undecodable_body_is_dead_lettered(conn: sqlite3.Connection) -> None:
    c = mc.Consumer(SPEC, "h", lambda tx, m, e: None)
    dl = c.process(conn, b"\xff\x01\x02")
    assert isinstance(dl, mc.DeadLetter)
    assert (dl.reason, dl.code, dl.attempts) == ("decode", mc.CODE_DECODE, 0)


def test_include_dir_holds_the_options() -> None:
    from msgcontract_runtime.include import include_dir

    with open(f"{include_dir()}/msgcontract/v1/options.proto", encoding="utf-8") as f:
        assert "package msgcontract.v1;" in f.read()


def _writing_consumer(conn: sqlite3.Connection, seen: list[mc.Outcome]) -> mc.Consumer[envelope_pb2.LastError]:
    """Writes the message's range into effects, then fails when the range is "bad"."""
    conn.execute("CREATE TABLE effects (range TEXT NOT NULL)")
    conn.commit()

    def write(tx: sqlite3.Connection, m: envelope_pb2.LastError, e: envelope_pb2.Envelope) -> None:
        tx.execute("INSERT INTO effects (range) VALUES (?)", (m.range,))
        if m.range == "bad":
            raise SPEC.rules.error(50301, "ledger down")

    return mc.Consumer(SPEC, "h", write, clock_ms=lambda: 10_000, rand=lambda: 0.0, observer=seen.append)


def test_a_shared_transaction_rolls_back_only_the_failing_delivery(conn: sqlite3.Connection) -> None:
    """Several deliveries in one transaction: the failing one takes back its own claim and writes (its
    savepoint), the others commit together; a second copy of a claimed key in the same transaction is a
    duplicate."""
    seen: list[mc.Outcome] = []
    c = _writing_consumer(conn, seen)
    begin(conn)
    pending = [c.process_shared(conn, _body(r)) for r in ("a", "bad", "c", "a")]
    assert seen == [], "outcomes are reported after the commit, not before"
    conn.commit()
    for p in pending:
        p.committed()
    assert pending[0].decision == mc.Ack()
    assert isinstance(pending[1].decision, mc.Retry)
    assert pending[2].decision == mc.Ack()
    assert pending[3].decision == mc.Ack(deduplicated=True)
    assert conn.execute("SELECT range FROM effects ORDER BY range").fetchall() == [("a",), ("c",)]
    assert conn.execute("SELECT biz_key FROM msg_dedup ORDER BY biz_key").fetchall() == [("range:a",), ("range:c",)]
    assert len(seen) == 4
    # The failed delivery left no claim: its retry is not taken for a duplicate.
    retry = pending[1].decision
    assert isinstance(retry, mc.Retry)
    retry.next_envelope.not_before = 0
    assert isinstance(c.process(conn, mc.encode(retry.next_envelope)), mc.DeadLetter)


def test_a_lost_shared_transaction_keeps_and_reports_nothing(conn: sqlite3.Connection) -> None:
    """begin opens the transaction first: under sqlite3 a SAVEPOINT outside one would open it, and its
    RELEASE would commit the delivery at once, before the caller's rollback."""
    seen: list[mc.Outcome] = []
    c = _writing_consumer(conn, seen)
    begin(conn)
    p = c.process_shared(conn, _body("a"))
    assert p.decision == mc.Ack()
    conn.rollback()
    p.lost(RuntimeError("commit failed"))
    p.committed()  # ended already: no effect
    assert seen == []
    assert conn.execute("SELECT count(*) FROM effects").fetchone() == (0,)
    assert c.process(conn, _body("a")) == mc.Ack(), "the handed-back delivery runs again"
    assert len(seen) == 1
