"""A KafkaConsumerLoop member that fails every PaySuccess and SIGKILLs itself at a retry publish,
for the retry chain tests.

Usage: chain_worker.py BROKERS NAMESPACE DB GEN_DIR WHEN MIN_ATTEMPT

DB is a SQLite file (the business database). The member of group "recon"
dies at the first retry copy it publishes of a record whose retry_count is at
least MIN_ATTEMPT: WHEN "published" right after the broker acknowledged the
copy (before the record's offset is committed), "advanced" just before
publishing it (the retry chain already records the record). It exits 1 if no
such retry came within 120 s. integration/kafkainterop's pyinterop.py uses
die_at_retry and fail for its PostgreSQL member.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import Sequence
from typing import Any

import msgcontract_runtime as mc
from conftest import pay_success_spec
from kafkahelp import sqlite_db
from msgcontract_runtime import kafka as mk


def fail(conn: Any, m: Any, env: Any) -> None:
    """A handler that always fails, retryably (the ledger is down)."""
    raise mc.RetryableError(50301, "system", "ledger answered 503")


def die_at_retry(loop: mk.KafkaConsumerLoop, topic: str, when: str, min_attempt: int) -> None:
    """Makes loop SIGKILL its process at the first retry copy of a record of retry_count >= min_attempt that it
    publishes to topic's retry topic: after the broker acknowledged it ("published") or before ("advanced")."""
    if when not in ("published", "advanced"):
        raise ValueError(f"when {when!r}: published or advanced")
    name = mk.retry_topic(loop.namespace, topic, loop.group)
    inner = loop._producer.produce

    def produce(t: str, key: bytes, value: bytes, headers: Sequence[tuple[str, bytes]]) -> None:
        if t != name or mc.decode(value).retry_count <= min_attempt:
            inner(t, key, value, headers)
            return
        if when == "published":
            inner(t, key, value, headers)
        print(f"chain_worker: killed {when} retry {mc.decode(value).retry_count} of {key.decode()}", flush=True)
        os.kill(os.getpid(), signal.SIGKILL)

    setattr(loop._producer, "produce", produce)


def main() -> None:
    brokers, ns, db_path, gen, when, min_attempt = sys.argv[1:7]
    sys.path.insert(0, gen)
    from shop.payment.v1 import payment_pb2  # type: ignore[import-not-found]

    loop = mk.KafkaConsumerLoop(brokers, "recon", [mc.Consumer(pay_success_spec(payment_pb2), "recon.pay", fail)],
                        sqlite_db(db_path), namespace=ns, partitions=2, session_timeout_ms=3000)
    die_at_retry(loop, "order-event", when, int(min_attempt))
    end = time.monotonic() + 120
    loop.run(lambda: time.monotonic() > end)
    sys.exit("chain_worker: no retry to die at within 120s")


if __name__ == "__main__":
    main()
