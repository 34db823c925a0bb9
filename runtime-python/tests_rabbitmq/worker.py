"""A RabbitMQConsumerLoop process for the SIGKILL test: applies PaySuccess events to a SQLite file until it
holds N effects.

Usage: worker.py URL PREFIX DB GEN_DIR N HANG_FILE
With HANG_FILE not empty, the handler of order "o-hang" creates HANG_FILE and
sleeps (inside the batch's open transaction) until the test kills the process.
Prints "worker: processed=P deduped=D" when it stops by itself.
"""

from __future__ import annotations

import pathlib
import sys
import time
from typing import Any

import msgcontract_runtime as mc
from conftest import pay_success_spec
from msgcontract_runtime import rabbitmq as mr
from rmqhelp import effects, sqlite_db


def main() -> None:
    url, prefix, db_path, gen, n, hang = sys.argv[1:7]
    sys.path.insert(0, gen)
    from shop.payment.v1 import payment_pb2  # type: ignore[import-not-found]

    spec = pay_success_spec(payment_pb2)
    db = sqlite_db(db_path)

    def handler(conn: Any, m: Any, env: Any) -> None:
        conn.cursor().execute("INSERT INTO effects (biz_key, order_id) VALUES (?, ?)", (env.biz_key, m.order_id))
        if hang and m.order_id == "o-hang":
            pathlib.Path(hang).touch()
            time.sleep(600)

    loop = mr.RabbitMQConsumerLoop(url, "recon", [mc.Consumer(spec, "recon.pay", handler)], db, prefix=prefix,
                                   batch_size=16)
    loop.run(lambda: effects(db)[0] >= int(n))
    print(f"worker: processed={loop.counts.processed} deduped={loop.counts.deduped}", flush=True)


if __name__ == "__main__":
    main()
