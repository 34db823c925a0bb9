"""A Python member of the mixed-group chaos run (make chaos-mixed).

runtime-go/bench/chaos -members go,spring,python starts it in a consumer
slot, SIGKILLs it at random and starts it again. It joins the Kafka group
of the Go members with msgcontract_runtime.kafka.KafkaConsumerLoop and does
what their handler does (runtime-go/bench/chaos/child.go): by the payload,
fail transiently, fail for good, or insert the effect row in the business
transaction. SIGTERM is a graceful stop: commit what is settled, leave the
group, exit 0.

The parent sets MSGCONTRACT_KAFKA_BROKERS, CHAOS_NS (the topics'
namespace), CHAOS_PG_URL and CHAOS_PG_SCHEMA (the business database),
CHAOS_ID and CHAOS_HANDLER_DELAY_MS.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from typing import Any

import psycopg
from google.protobuf import wrappers_pb2

import msgcontract_runtime as mc
from msgcontract_runtime import kafka as mk

# The bench contract of runtime-go/bench/internal/benchmsg, as Python declares it.
SPEC: mc.EventSpec[Any] = mc.EventSpec(
    full_name="google.protobuf.StringValue", topic="bench", event_type="BENCH",
    biz_key_template="{value}",
    retry=mc.RetryPolicy(base_ms=50, multiplier=2, jitter_ms=50, max_delay_ms=1000, max_retries=4),
    rules=mc.ErrorRules(ranges=[mc.ErrorRange(40000, 49999, False, "business"),
                                mc.ErrorRange(50000, 59999, True, "system")], unclassified_retryable=True),
    target_state="", message_type=wrappers_pb2.StringValue,
    key_function=lambda m: mc.escape(m.value),
)
HANDLER = "bench-handler"
GROUP = "chaos"
CODE_BUSINESS = 40001
CODE_SYSTEM = 50001


def main() -> None:
    env = os.environ
    stop = False

    def on_term(_sig: int, _frame: Any) -> None:
        nonlocal stop
        stop = True

    signal.signal(signal.SIGTERM, on_term)
    note = f"python-p{env['CHAOS_ID']}"
    delay = int(env.get("CHAOS_HANDLER_DELAY_MS", "0")) / 1000.0
    conn = psycopg.connect(env["CHAOS_PG_URL"], options=f"-c search_path={env['CHAOS_PG_SCHEMA']}")

    def handle(tx: Any, m: Any, e: Any) -> None:
        kind = m.value
        if kind == "poison-code":
            raise SPEC.rules.error(CODE_BUSINESS, "poison")
        if kind == "exhausted":
            raise SPEC.rules.error(CODE_SYSTEM, "never recovers")
        if (kind == "transient-1" and e.retry_count < 1) or (kind == "transient-2" and e.retry_count < 2):
            raise SPEC.rules.error(CODE_SYSTEM, "transient")
        tx.cursor().execute("INSERT INTO effects (biz_key, note) VALUES (%s, %s)", (e.biz_key, note))
        if delay > 0:
            time.sleep(delay)

    consumer = mc.Consumer(SPEC, HANDLER, handle, paramstyle="format")  # psycopg's placeholders
    loop = mk.KafkaConsumerLoop(env["MSGCONTRACT_KAFKA_BROKERS"], GROUP, [consumer], conn,
                                namespace=env["CHAOS_NS"], partitions=6, session_timeout_ms=3000,
                                connect_timeout_s=60.0,
                                # librdkafka's errors while the broker restarts are expected here
                                config={"log_level": 2})
    loop.run(lambda: stop)
    print(f"member python {note}: handled={loop.counts.processed} deduplicated={loop.counts.deduped}",
          file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
