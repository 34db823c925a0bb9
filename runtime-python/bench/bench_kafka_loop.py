"""make bench-python-kafka: KafkaConsumerLoop with batch_size 64 against 1 (a transaction per record), side by side.

It publishes -n records of distinct biz_keys (Kafka key = biz_key) to a
6-partition topic of a broker (MSGCONTRACT_KAFKA_BROKERS, which
scripts/with-kafka.sh sets) once, runs both modes once untimed (warm-up),
then in each of --rounds rounds runs both, in alternating order, each as a
new group (so from the first offset) into a fresh SQLite file (WAL, the
default synchronous FULL, so a commit is durable) on one sqlite3 connection,
with a handler that INSERTs one row. A run is timed from its first processed
record to its last (the group's join and what settled with the first are left
out), with the process's CPU over the same span; every run checks that each
record left exactly one row. It prints each run, then

    ratio batch/per-record=X (msg/s, median of the rounds' own ratios; LO-HI)
    cpu per message: batch Y us, per-record Z us (medians)

Nothing is asserted: the figures are measured and printed.

    python bench_kafka_loop.py [-n 20000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import statistics
import sys
import tempfile
import time
import uuid

from confluent_kafka import Producer

import msgcontract_runtime as mc
from msgcontract.v1 import envelope_pb2
from msgcontract_runtime import kafka as mk

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
from aio_support import SPEC  # noqa: E402  (the tests' event: LastError, biz_key range:{range})

PARTITIONS = 6


def publish(brokers: str, ns: str, n: int) -> None:
    """Publishes n envelopes of distinct biz_keys, keyed by biz_key, all in flight at once."""
    topic = ns + SPEC.topic
    mk.ensure_topics(brokers, [topic], partitions=PARTITIONS)
    p = Producer({"bootstrap.servers": brokers, "enable.idempotence": True, "acks": "all",
                  "partitioner": "murmur2_random", "linger.ms": 5})
    failed: list[str] = []

    def done(err: object, _msg: object) -> None:
        if err is not None:
            failed.append(str(err))

    for i in range(n):
        env = mc.new_envelope(SPEC, envelope_pb2.LastError(range=f"r{i}"), occurred_at_ms=int(time.time() * 1000))
        p.produce(topic, key=env.biz_key.encode("utf-8"), value=mc.encode(env), on_delivery=done)
        p.poll(0)
    if p.flush(60) != 0 or failed:
        raise SystemExit(f"bench: publishing failed: {failed[:3]}")


def run(brokers: str, ns: str, n: int, batch_size: int, name: str, tmp: str) -> tuple[float, float, int]:
    """One mode's run: (seconds, CPU seconds, records timed)."""
    path = os.path.join(tmp, name + ".db")
    conn = sqlite3.connect(path, timeout=30, check_same_thread=False)
    conn.execute("PRAGMA journal_mode=WAL")
    mc.migrate(conn)
    conn.execute("CREATE TABLE applied (biz_key TEXT NOT NULL)")
    conn.commit()

    def handler(tx: sqlite3.Connection, m: envelope_pb2.LastError, env: envelope_pb2.Envelope) -> None:
        tx.execute("INSERT INTO applied (biz_key) VALUES (?)", (env.biz_key,))

    loop = mk.KafkaConsumerLoop(brokers, "bench-" + name, [mc.Consumer(SPEC, "bench", handler)], conn, namespace=ns,
                        partitions=PARTITIONS, batch_size=batch_size)
    deadline = time.monotonic() + 600
    try:
        while loop.counts.processed == 0:
            loop.step()
            if time.monotonic() > deadline:
                raise SystemExit(f"bench: {name}: nothing processed in 10 minutes")
        t0, cpu0, before = time.perf_counter(), time.process_time(), loop.counts.processed
        while loop.counts.processed < n:
            loop.step()
            if time.monotonic() > deadline:
                raise SystemExit(f"bench: {name}: {loop.counts.processed} of {n} processed in 10 minutes")
        t1, cpu1 = time.perf_counter(), time.process_time()
    finally:
        loop.close()
    rows, keys = conn.execute("SELECT count(*), count(DISTINCT biz_key) FROM applied").fetchone()
    conn.close()
    if (rows, keys) != (n, n):
        raise SystemExit(f"bench: {name}: {rows} rows of {keys} keys, want {n}")
    return t1 - t0, cpu1 - cpu0, n - before


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-n", type=int, default=20000, help="records (default 20000)")
    ap.add_argument("--rounds", type=int, default=3, help="timed rounds (default 3)")
    args = ap.parse_args()
    brokers = os.environ.get("MSGCONTRACT_KAFKA_BROKERS", "")
    if not brokers:
        raise SystemExit("bench: MSGCONTRACT_KAFKA_BROKERS is not set: run it through make bench-python-kafka")
    ns = "pybench" + uuid.uuid4().hex[:8] + "."
    publish(brokers, ns, args.n)
    print(f"bench: {args.n} records of distinct keys on {PARTITIONS} partitions; {args.rounds} rounds")
    rates: dict[int, list[float]] = {64: [], 1: []}
    cpus: dict[int, list[float]] = {64: [], 1: []}
    with tempfile.TemporaryDirectory(prefix="msgcontract-kafka-bench") as tmp:
        for size in (64, 1):  # warm-up
            run(brokers, ns, args.n, size, f"warmup-{size}", tmp)
        for r in range(args.rounds):
            for size in (64, 1) if r % 2 == 0 else (1, 64):
                secs, cpu, timed = run(brokers, ns, args.n, size, f"r{r}-{size}", tmp)
                rates[size].append(timed / secs)
                cpus[size].append(cpu * 1e6 / timed)
                mode = "batch 64" if size == 64 else "per-record"
                print(f"round {r}: {mode:10s} {timed / secs:8.0f} msg/s  {cpu * 1e6 / timed:7.1f} us CPU a message "
                      f"({secs:.2f} s)")
    ratios = sorted(b / s for b, s in zip(rates[64], rates[1], strict=True))
    print(f"ratio batch/per-record={statistics.median(ratios):.2f} (msg/s, median of the rounds' own ratios; "
          f"{ratios[0]:.2f}-{ratios[-1]:.2f})")
    print(f"cpu per message: batch {statistics.median(cpus[64]):.1f} us, "
          f"per-record {statistics.median(cpus[1]):.1f} us (medians)")


if __name__ == "__main__":
    main()
