"""The Python side of integration/rabbitmqinterop: msgcontract_runtime.rabbitmq against runtime-go's transport.

Usage:
  pyinterop.py declare URL PREFIX GROUP          declare what a member of GROUP on order-event declares
  pyinterop.py publish URL PREFIX GEN N          publish PaySuccess py-0 .. py-<N-1>
  pyinterop.py member URL PREFIX GEN DB STOP     RabbitMQConsumerLoop of group payments on the SQLite file DB
                                                 (effects rows (biz_key, 'py'); a flaky-* order fails the
                                                 first time this member sees it) until the file STOP
                                                 exists; then prints "py: processed=P deduped=D retried=R ..."
  pyinterop.py deadletter URL PREFIX GEN         publish a body that is no envelope, consume it as group
                                                 payments until it is dead-lettered
  pyinterop.py dlq URL PREFIX                    print the dead-letter store's records, one JSON a line
GEN is a directory for protoc's Python of the example payment contract.
"""

from __future__ import annotations

import json
import os
import pathlib
import sqlite3
import sys
import time
from typing import Any

import msgcontract_runtime as mc
from conftest import generate_payment, pay_success_spec
from msgcontract_runtime import rabbitmq as mr


def payment(gen: str) -> Any:
    generate_payment(pathlib.Path(gen))
    sys.path.insert(0, gen)
    from shop.payment.v1 import payment_pb2  # type: ignore[import-not-found]

    return payment_pb2


def main() -> None:
    cmd, url, prefix = sys.argv[1], sys.argv[2], sys.argv[3]
    if cmd == "declare":
        c = mr.Connection(mr.Config(url, prefix=prefix))
        c.declare_member(sys.argv[4], ["order-event"])
        c.close()
    elif cmd == "publish":
        pb = payment(sys.argv[4])
        spec = pay_success_spec(pb)
        pub = mr.RabbitMQPublisher(mr.Config(url, prefix=prefix))
        for i in range(int(sys.argv[5])):
            pub.publish(spec.topic, mc.new_envelope(spec, pb.PaySuccess(order_id=f"py-{i}", amount=i, currency="EUR")))
        pub.close()
    elif cmd == "member":
        pb = payment(sys.argv[4])
        spec = pay_success_spec(pb)
        db = sqlite3.connect(sys.argv[5], timeout=30, isolation_level="DEFERRED")
        db.execute("PRAGMA busy_timeout = 30000")
        stop = sys.argv[6]
        seen: set[str] = set()

        def handler(conn: Any, m: Any, env: Any) -> None:
            if m.order_id.startswith("flaky-") and m.order_id not in seen:  # fails the first time seen here
                seen.add(m.order_id)
                raise mc.RetryableError(50301, "system", "ledger answered 503 (first sight in py)")
            conn.cursor().execute("INSERT INTO effects (biz_key, who) VALUES (?, 'py')", (env.biz_key,))

        loop = mr.RabbitMQConsumerLoop(url, "payments", [mc.Consumer(spec, "payments.pay", handler)], db,
                                       prefix=prefix, batch_size=8)
        print("py: ready", flush=True)
        loop.run(lambda: os.path.exists(stop))
        n = loop.counts
        print(f"py: processed={n.processed} deduped={n.deduped} retried={n.retried} deferred={n.deferred} ",
              flush=True)
    elif cmd == "deadletter":
        pb = payment(sys.argv[4])
        spec = pay_success_spec(pb)
        db = sqlite3.connect(":memory:")
        mc.migrate(db)
        loop = mr.RabbitMQConsumerLoop(url, "payments", [mc.Consumer(spec, "payments.pay", lambda *_: None)], db,
                                       prefix=prefix)
        pub = mr.RabbitMQPublisher(mr.Config(url, prefix=prefix))
        pub.publish_raw("order-event", b"\x0a\x01")
        pub.close()
        end = time.monotonic() + 60
        while loop.counts.dead_lettered < 1:
            if time.monotonic() > end:
                sys.exit("pyinterop: the poison message was not dead-lettered within 60s")
            loop.step()
        loop.close()
    elif cmd == "dlq":
        store = mr.DeadLetters(url, prefix=prefix)
        for r in store.list():
            print(json.dumps(r))
        store.close()
    else:
        sys.exit(f"pyinterop: unknown command {cmd}")


if __name__ == "__main__":
    main()
