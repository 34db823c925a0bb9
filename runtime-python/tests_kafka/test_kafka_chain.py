"""One retry chain per message on a real broker (docs/DESIGN.md, "One retry chain per message"; issue #42).

Every message fails until it is dead-lettered (pay_success_spec: 3 retries).
A KafkaConsumerLoop member SIGKILLed right after its retry publish, before its
offset commit, leaves its record to the next owner, which fails it again and
publishes a second copy of the same attempt; a retry copy published twice
(identical bytes) does the same to the asyncio consumer. Either way T.dlq
must hold each message once, the retry topic one copy of each message's
attempts 2 and 3 (the fork stopped at attempt 1), and the surviving member
count one superseded copy as deduplicated.
"""

from __future__ import annotations

import asyncio
import collections
import os
import pathlib
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

import msgcontract_runtime as mc
from aiokafkahelp import Outcomes, run, sqlite_db as async_sqlite_db, until
from chain_worker import fail
from conftest import brokers, generate_payment
from kafkahelp import dlq_meta, publish_orders, read_topic, sqlite_db, wait
from msgcontract_runtime import kafka as mk
from msgcontract_runtime.aio import AsyncConsumer
from msgcontract_runtime.aio.kafka import KafkaSubscription

N = 6
RETRIES = 3  # pay_success_spec's max_retries


def quiet(counts: Callable[[], Any], step: Callable[[], None], quiet_s: float = 4.0, limit_s: float = 60) -> None:
    """Steps until counts() has not changed for quiet_s: a forked chain's extra retries and dead letter, which
    come within the retry delays (0.2 + 0.4 + 0.8 s) of the first chain's, would have shown."""
    end = time.monotonic() + limit_s
    last, since = counts(), time.monotonic()
    while time.monotonic() - since < quiet_s:
        assert time.monotonic() < end, "the counts kept changing"
        step()
        if counts() != last:
            last, since = counts(), time.monotonic()


def check_dead_letters(b: str, ns: str) -> None:
    """T.dlq holds each of the N messages once, dead after 1 + RETRIES attempts."""
    dead = read_topic(b, mk.dlq_topic(ns, "order-event"), N)
    metas = [dlq_meta(m) for m in dead]
    ids = sorted(m["message_id"] for m in metas)
    assert len(ids) == N and len(set(ids)) == N, f"{len(ids)} dead letters for {len(set(ids))} messages: {ids}"
    assert {m["attempts"] for m in metas} == {1 + RETRIES}
    assert {m["reason"] for m in metas} == {"retries_exhausted"}


def check_retry_copies(b: str, ns: str) -> None:
    """The retry topic holds each message's attempts 1 to RETRIES, one copy each, but for the forked attempt 1
    of one message, which may have two."""
    copies = read_topic(b, mk.retry_topic(ns, "order-event", "recon"), N * RETRIES)
    n = collections.Counter((e.message_id, e.retry_count) for e in (mc.decode(m.value()) for m in copies))
    assert {a for _, a in n} == set(range(1, RETRIES + 1)) and len({m for m, _ in n}) == N, n
    assert sorted(c for (_, a), c in n.items() if a > 1) == [1] * N * (RETRIES - 1), n
    assert sorted(c for (_, a), c in n.items() if a == 1)[:-1] == [1] * (N - 1), n


def test_member_killed_between_retry_publish_and_commit(tmp_path: pathlib.Path, spec: Any, pb: Any,
                                                       ns: str) -> None:
    """chain_worker.py dies right after the broker acknowledged its first retry copy: nothing of it is
    committed. The survivor handles every record again. When it fails the dead member's record first (the
    same record id: its retry may not have been published, it goes on), it publishes a second attempt-1 copy
    of that message and settles the copy that fails second as superseded; when it fails the dead member's
    retry copy first, the record itself is superseded (its retry went on)."""
    b = brokers()
    gen = generate_payment(tmp_path / "gen")
    db_path = str(tmp_path / "biz.db")
    db = sqlite_db(db_path)
    publish_orders(b, ns, 2, spec, pb, N)
    here = pathlib.Path(__file__).parent
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(here), str(here.parent / "src"),
                                                       os.environ.get("PYTHONPATH", "")]))
    worker = subprocess.run([sys.executable, str(here / "chain_worker.py"), b, ns, db_path, str(gen), "published",
                             "0"], env=env, stdout=subprocess.PIPE, text=True, timeout=180)
    assert worker.returncode == -9, f"the worker was to kill itself: {worker.returncode} {worker.stdout}"
    assert "killed published retry 1" in worker.stdout

    loop = mk.KafkaConsumerLoop(b, "recon", [mc.Consumer(spec, "recon.pay", fail)], db, namespace=ns, partitions=2,
                        session_timeout_ms=3000)
    try:
        wait(lambda: loop.counts.dead_lettered >= N, loop.step, f"{N} dead letters")
        quiet(lambda: (loop.counts.retried, loop.counts.dead_lettered, loop.counts.deduped), loop.step)
    finally:
        loop.close()
    check_dead_letters(b, ns)
    check_retry_copies(b, ns)
    c = loop.counts
    assert (c.dead_lettered, c.deduped, c.processed) == (N, 1, 0), c
    assert c.retried in (RETRIES * N - 1, RETRIES * N), c


def test_async_retry_copy_published_twice(tmp_path: pathlib.Path, spec: Any, pb: Any, ns: str) -> None:
    """AsyncConsumer on KafkaSubscription: the first retry copy is produced twice, the same bytes at two
    offsets of the retry topic. The two copies meet at attempt 1: the first goes on, the second is
    superseded (looked up before its handler runs), so one chain reaches the dead-letter topic."""
    b = brokers()
    publish_orders(b, ns, 2, spec, pb, N)
    path = str(tmp_path / "biz.db")
    seen = Outcomes()

    async def failing(tx: Any, m: Any, env: Any) -> None:
        fail(tx, m, env)

    async def main() -> None:
        db = await async_sqlite_db(path)
        sub = await KafkaSubscription.open(b, "recon", [spec], namespace=ns, partitions=2)
        inner = sub._producer.produce
        twice = [True]

        async def produce(t: str, key: bytes, value: bytes, headers: Sequence[tuple[str, bytes]]) -> None:
            await inner(t, key, value, headers)
            if t == mk.retry_topic(ns, "order-event", "recon") and twice[0]:
                twice[0] = False
                await inner(t, key, value, headers)

        setattr(sub._producer, "produce", produce)
        c = AsyncConsumer(spec, "recon.pay", failing, concurrency=4, observer=seen)
        stop = asyncio.Event()
        task = asyncio.create_task(c.run(sub, db, stop))
        try:
            await until(lambda: seen["dead_lettered"] >= N, f"{N} dead letters", task=task)
            last = dict(seen.counts)
            since = time.monotonic()
            while time.monotonic() - since < 4.0:  # a forked chain's extra outcomes would show by then
                await asyncio.sleep(0.1)
                if dict(seen.counts) != last:
                    last, since = dict(seen.counts), time.monotonic()
            stop.set()
            await task
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            await sub.close()
            await db.close()
        assert not twice[0], "a retry copy was produced twice"

    run(main)
    check_dead_letters(b, ns)
    check_retry_copies(b, ns)
    assert (seen["retry_scheduled"], seen["dead_lettered"], seen["deduplicated"], seen["handled"]) == (
        RETRIES * N, N, 1, 0), seen.counts
