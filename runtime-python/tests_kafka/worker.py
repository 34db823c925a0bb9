"""A KafkaConsumerLoop process for the SIGKILL test: applies PaySuccess events to a SQLite file until it
holds N effects.

Usage: worker.py BROKERS NAMESPACE DB GEN_DIR N
Prints "worker: processed=P deduped=D" when it stops by itself.
"""

from __future__ import annotations

import sys
import time
from typing import Any

import msgcontract_runtime as mc
from conftest import pay_success_spec
from kafkahelp import effects, sqlite_db
from msgcontract_runtime import kafka as mk


def main() -> None:
    brokers, ns, db_path, gen, n = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
    sys.path.insert(0, gen)
    from shop.payment.v1 import payment_pb2  # type: ignore[import-not-found]

    spec = pay_success_spec(payment_pb2)
    db = sqlite_db(db_path)

    def handler(conn: Any, m: Any, env: Any) -> None:
        conn.cursor().execute("INSERT INTO effects (biz_key, order_id) VALUES (?, ?)", (env.biz_key, m.order_id))
        time.sleep(0.01)  # a slow handler, so a kill lands mid-batch

    loop = mk.KafkaConsumerLoop(brokers, "recon", [mc.Consumer(spec, "recon.pay", handler)], db, namespace=ns,
                        partitions=2, commit_interval_s=2.0, session_timeout_ms=3000)
    loop.run(lambda: effects(db)[0] >= n)
    print(f"worker: processed={loop.counts.processed} deduped={loop.counts.deduped}", flush=True)


if __name__ == "__main__":
    main()
