"""Consumes one PaySuccess delivered twice: the payment is recorded once."""

from __future__ import annotations

import sqlite3

from shop.payment.v1 import payment_msgcontract as contract, payment_pb2

import msgcontract_runtime as mc


def record_payment(tx: sqlite3.Connection, m: payment_pb2.PaySuccess, env: object) -> None:
    """The business write; it runs in the transaction that holds the dedup claim."""
    tx.execute("INSERT INTO payments VALUES (?, ?)", (m.order_id, m.amount))


def main() -> None:
    db = sqlite3.connect(":memory:")
    mc.migrate(db)
    db.execute("CREATE TABLE payments (order_id TEXT PRIMARY KEY, amount INTEGER)")
    consumer = mc.Consumer(contract.PAY_SUCCESS, "record-payment", record_payment)
    paid = payment_pb2.PaySuccess(order_id="20250101_0001", amount=1999)
    body = mc.encode(mc.new_envelope(contract.PAY_SUCCESS, paid))
    for delivery in (1, 2):  # the broker delivers it twice
        print(f"delivery {delivery}: {consumer.process(db, body)}")
    (count,) = db.execute("SELECT count(*) FROM payments").fetchone()
    print(f"payments recorded: {count} (delivered twice)")
    if count != 1:
        raise SystemExit("want 1 payment")


if __name__ == "__main__":
    main()
