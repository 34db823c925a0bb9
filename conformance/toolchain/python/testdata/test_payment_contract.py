"""Behaviour of the generated payment contract and the consumer skeleton on sqlite3."""

from __future__ import annotations

import sqlite3
from typing import Any

import pytest
from shop.payment.v1 import payment_msgcontract as contract, payment_pb2

import msgcontract_runtime as support
from msgcontract.v1 import envelope_pb2

NOW = 1_700_000_000_000


def pay(order_id: str) -> payment_pb2.PaySuccess:
    return payment_pb2.PaySuccess(order_id=order_id, amount=100)


@pytest.fixture
def conn() -> Any:
    c = sqlite3.connect(":memory:")
    support.migrate(c)
    c.execute("CREATE TABLE payments (order_id TEXT PRIMARY KEY, amount BIGINT)")
    c.commit()
    yield c
    c.close()


def consumer(handler: Any) -> support.Consumer[payment_pb2.PaySuccess]:
    return support.Consumer(contract.PAY_SUCCESS, "payments", handler, clock_ms=lambda: NOW, rand=lambda: 0.5)


def insert(tx: Any, m: payment_pb2.PaySuccess, env: envelope_pb2.Envelope) -> None:
    tx.execute("INSERT INTO payments VALUES (?, ?)", (m.order_id, m.amount))


def count(conn: Any, table: str) -> int:
    return int(conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])


def test_biz_key_escapes_and_rejects_empty() -> None:
    assert contract.pay_success_biz_key(pay("a b:中")) == "order_id:a%20b%3A%E4%B8%AD:PAY_SUCCESS"
    with pytest.raises(support.BizKeyError) as e:
        contract.pay_success_biz_key(pay(""))
    assert e.value.code == "EMPTY_FIELD" and e.value.field == "order_id"


def test_contract_constants_and_errors() -> None:
    assert contract.PAY_SUCCESS_TOPIC == "order-event"
    assert contract.PAY_SUCCESS.event_type == "PAY_SUCCESS"
    assert isinstance(contract.error(50301, "db down"), support.RetryableError)
    assert isinstance(contract.error(40001, "bad order"), support.NonRetryableError)
    assert contract.classify(40001) == support.Classification(False, "business")
    assert contract.order_state_can_transit("PAYING", "PAID") is support.Transit.ALLOWED
    assert contract.order_state_can_transit(payment_pb2.PAID, payment_pb2.PAID) is support.Transit.DUPLICATE
    assert contract.order_state_can_transit("REFUNDED", "PAID") is support.Transit.ILLEGAL


def test_envelope_json_uses_proto_field_names() -> None:
    env = support.new_envelope(contract.PAY_SUCCESS, pay("o-1"), NOW, json=True)
    text = support.encode_json(env)
    assert '"biz_key"' in text and "bizKey" not in text
    assert b'"order_id"' in env.payload
    assert support.payload(contract.PAY_SUCCESS, support.decode_json(text)) == pay("o-1")
    assert len(env.message_id) == 32
    with pytest.raises(support.DecodeError):
        support.decode(b"\x01\x02\x03")


def test_duplicate_delivery_runs_handler_once(conn: Any) -> None:
    body = support.encode(support.new_envelope(contract.PAY_SUCCESS, pay("o-1"), NOW))
    c = consumer(insert)
    assert c.process(conn, body) == support.Ack(False)
    assert c.process(conn, body) == support.Ack(True)
    assert count(conn, "payments") == 1 and count(conn, "msg_dedup") == 1


def test_retryable_failure_rolls_back_claim_and_schedules_retry(conn: Any) -> None:
    body = support.encode(support.new_envelope(contract.PAY_SUCCESS, pay("o-2"), NOW))

    def fail(tx: Any, m: payment_pb2.PaySuccess, env: envelope_pb2.Envelope) -> None:
        insert(tx, m, env)
        raise contract.error(50301, "db down")

    d = consumer(fail).process(conn, body)
    assert isinstance(d, support.Retry)
    assert d.delay_ms == 1500  # d(1) = 1000 plus floor(1000 * 0.5)
    assert d.next_envelope.retry_count == 1 and d.next_envelope.not_before == NOW + 1500
    assert d.next_envelope.last_error.range == "system" and d.next_envelope.last_error.code == 50301
    assert count(conn, "payments") == 0 and count(conn, "msg_dedup") == 0
    d.next_envelope.not_before = NOW
    assert consumer(insert).process(conn, support.encode(d.next_envelope)) == support.Ack(False)


def test_non_retryable_and_exhausted_are_dead_lettered(conn: Any) -> None:
    body = support.encode(support.new_envelope(contract.PAY_SUCCESS, pay("o-3"), NOW))

    def business(tx: Any, m: payment_pb2.PaySuccess, env: envelope_pb2.Envelope) -> None:
        raise contract.error(40001, "unknown order")

    assert consumer(business).process(conn, body) == support.DeadLetter(
        "non_retryable", 40001, "code 40001: unknown order", 1)

    last = support.decode(body)
    last.retry_count = 6

    def boom(tx: Any, m: payment_pb2.PaySuccess, env: envelope_pb2.Envelope) -> None:
        raise RuntimeError("boom")

    assert consumer(boom).process(conn, support.encode(last)) == support.DeadLetter("retries_exhausted", 0, "boom", 7)


def test_undecodable_and_early_messages(conn: Any) -> None:
    d = consumer(insert).process(conn, b"not protobuf")
    assert isinstance(d, support.DeadLetter) and d.reason == "decode"
    early = support.new_envelope(contract.PAY_SUCCESS, pay("o-4"), NOW)
    early.not_before = NOW + 10
    assert consumer(insert).process(conn, support.encode(early)) == support.Defer(NOW + 10)
