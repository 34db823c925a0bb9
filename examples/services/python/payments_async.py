"""payments.py on asyncio: one PaySuccess delivered twice to an AsyncConsumer, the payment recorded once."""

from __future__ import annotations

import asyncio
import pathlib
import tempfile

import aiosqlite
from shop.payment.v1 import payment_msgcontract as contract, payment_pb2

import msgcontract_runtime as mc
from msgcontract_runtime.aio import Registry
from msgcontract_runtime.aio.sqlite import SQLiteDatabase, connect


async def record_payment(tx: aiosqlite.Connection, m: payment_pb2.PaySuccess, env: object) -> None:
    """The business write; it runs in the transaction that holds the dedup claim."""
    await tx.execute("INSERT INTO payments VALUES (?, ?)", (m.order_id, m.amount))


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = str(pathlib.Path(tmp) / "payments.db")
        setup = await connect(path)
        await setup.execute("CREATE TABLE payments (order_id TEXT PRIMARY KEY, amount INTEGER)")
        await setup.close()
        db = await SQLiteDatabase.open(path, size=1)  # creates the dedup claim table
        consumer = contract.register_pay_success_handler_async(Registry(), "record-payment", record_payment)
        paid = payment_pb2.PaySuccess(order_id="20250101_0001", amount=1999)
        body = mc.encode(mc.new_envelope(contract.PAY_SUCCESS, paid))
        for delivery in (1, 2):  # the broker delivers it twice
            print(f"async delivery {delivery}: {await consumer.process(db, body)}")
        await db.close()
        check = await connect(path)
        async with check.execute("SELECT count(*) FROM payments") as cur:
            row = await cur.fetchone()
        await check.close()
    count = int(row[0]) if row is not None else 0
    print(f"async: payments recorded: {count} (delivered twice)")
    if count != 1:
        raise SystemExit("want 1 payment")


if __name__ == "__main__":
    asyncio.run(main())
