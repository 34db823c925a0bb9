"""AsyncConsumer on KafkaSubscription, on a real broker: test_kafka_loop's cases and issue #20's fault tests.

Effect once, retry then success, poison to the DLQ with KafkaConsumerLoop's
metadata, a sync KafkaConsumerLoop and an async member in one group, a duplicate
to two async members at once, PostgreSQL (asyncpg), a task cancelled
mid-handler (redelivered, never acknowledged), a revocation with handlers
in flight. The SIGKILL test is test_aio_kafka_kill.py.
"""

from __future__ import annotations

import asyncio
import os
import pathlib
import threading
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from confluent_kafka import Consumer, TopicPartition

import msgcontract_runtime as mc
from aiokafkahelp import CREATE_EFFECTS, Outcomes, effects, record_effect, run, sqlite_db, until
from conftest import brokers
from kafkahelp import (
    dlq_meta,
    publish_orders,
    publish_pay,
    publish_poison,
    read_topic,
    sqlite_db as sync_sqlite_db,
    wait as sync_wait,
)
from msgcontract_runtime import kafka as mk, wire
from msgcontract_runtime.aio import AsyncConsumer, AsyncDatabase, AsyncHandler
from msgcontract_runtime.aio.kafka import KafkaSubscription
from msgcontract_runtime.aio.postgres import PostgresDatabase


def consumer(spec: Any, handler: AsyncHandler[Any], outcomes: Outcomes, concurrency: int = 8) -> AsyncConsumer[Any]:
    return AsyncConsumer(spec, "recon.pay", handler, concurrency=concurrency, observer=outcomes)


async def consume_until(c: AsyncConsumer[Any], sub: KafkaSubscription, db: AsyncDatabase, cond: Any, what: str,
                        meanwhile: Callable[[asyncio.Task[None]], Awaitable[None]] | None = None) -> None:
    """Runs c on sub (and meanwhile, given the run's task) until cond holds, then stops it gracefully and closes sub."""
    stop = asyncio.Event()
    task = asyncio.create_task(c.run(sub, db, stop))
    try:
        if meanwhile is not None:
            await meanwhile(task)
        await until(cond, what, task=task)
        stop.set()
        await task
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await sub.close()


def committed(b: str, group: str, topic: str) -> dict[int, int]:
    """The group's committed offsets of topic, by partition (-1001: none)."""
    c = Consumer({"bootstrap.servers": b, "group.id": group})
    try:
        parts = c.list_topics(topic, timeout=10).topics[topic].partitions
        return {tp.partition: tp.offset for tp in c.committed([TopicPartition(topic, p) for p in parts], timeout=10)}
    finally:
        c.close()


def test_async_duplicates_apply_once(tmp_path: pathlib.Path, spec: Any, pb: Any, ns: str) -> None:
    b = brokers()
    publish_orders(b, ns, 3, spec, pb, 20, times=2)
    path = str(tmp_path / "biz.db")
    seen = Outcomes()

    async def main() -> None:
        db = await sqlite_db(path)
        sub = await KafkaSubscription.open(b, "recon", [spec], namespace=ns, partitions=3)
        await consume_until(consumer(spec, record_effect, seen), sub, db,
                            lambda: seen["handled"] + seen["deduplicated"] == 40, "40 deliveries")
        await db.close()

    run(main)
    assert (seen["handled"], seen["deduplicated"]) == (20, 20)
    assert effects(path) == (20, 20)
    assert sum(committed(b, ns + "recon", ns + "order-event").values()) == 40, "every offset committed"


def test_async_retry_then_success(tmp_path: pathlib.Path, spec: Any, pb: Any, ns: str) -> None:
    b = brokers()
    pub = mk.KafkaPublisher(b, namespace=ns, partitions=1)
    publish_pay(pub, spec, pb, "flaky")
    publish_pay(pub, spec, pb, "steady")
    pub.close()
    calls: dict[str, int] = {}
    path = str(tmp_path / "biz.db")
    seen = Outcomes()

    async def handler(tx: Any, m: Any, env: Any) -> None:
        calls[m.order_id] = calls.get(m.order_id, 0) + 1
        await record_effect(tx, m, env)
        if m.order_id == "flaky" and calls[m.order_id] <= 2:
            raise mc.RetryableError(50301, "system", "ledger answered 503")

    async def main() -> None:
        db = await sqlite_db(path)
        sub = await KafkaSubscription.open(b, "recon", [spec], namespace=ns, partitions=1)
        await consume_until(consumer(spec, handler, seen), sub, db, lambda: seen["handled"] == 2, "both handled")
        assert sub.counts.retried == 2 and sub.counts.dead_lettered == 0
        await db.close()

    run(main)
    assert calls == {"flaky": 3, "steady": 1}
    assert seen["retry_scheduled"] == 2
    assert effects(path) == (2, 2)  # the failed runs rolled back with their claims
    retries = read_topic(b, mk.retry_topic(ns, "order-event", "recon"), 2)
    assert sorted(mc.decode(m.value()).retry_count for m in retries) == [1, 2]
    assert all(dict(m.headers())[mk.HEADER_TOPIC] == b"order-event" for m in retries)


def test_async_poison_is_dead_lettered_as_the_sync_loop_does(tmp_path: pathlib.Path, spec: Any, pb: Any,
                                                              ns: str) -> None:
    """The same poison (payload, envelope, no handler, refused, framed without a registry) through KafkaConsumerLoop
    (group sync) and AsyncConsumer (group async): the same dead letters, metadata and values."""
    b = brokers()
    pub = mk.KafkaPublisher(b, namespace=ns, partitions=1)
    publish_poison(pub, spec, pb, ns)
    other = mc.new_envelope(spec, pb.PaySuccess(order_id="other"))
    other.event_type = "PAY_CANCELLED"  # no handler in either group
    pub.publish(spec.topic, other)
    head, payload = wire.split(mc.new_envelope(spec, pb.PaySuccess(order_id="framed")))
    # Confluent-framed, and neither group has a registry_url: dead-lettered "schema".
    pub._p.produce(ns + "order-event", b"framed", wire.frame(1, [0], payload), [(wire.HEADER_ENVELOPE, head)])
    pub.close()

    def refuse(m: Any) -> None:
        if m.order_id == "refused":
            raise mc.NonRetryableError(40001, "business", "order unknown")

    async def handler(tx: Any, m: Any, env: Any) -> None:
        refuse(m)
        await record_effect(tx, m, env)

    seen = Outcomes()
    path = str(tmp_path / "biz.db")

    async def main() -> None:
        db = await sqlite_db(path)
        sub = await KafkaSubscription.open(b, "async", [spec], namespace=ns, partitions=1)
        await consume_until(consumer(spec, handler, seen), sub, db,
                            lambda: sub.counts.dead_lettered == 5 and seen["handled"] == 1, "5 dead letters")
        await db.close()

    run(main)
    assert effects(path) == (1, 1)
    assert seen["dead_lettered"] == 2  # the other three never reached the consumer: no envelope, no handler, schema

    sync_db = sync_sqlite_db(str(tmp_path / "sync.db"))

    def sync_handler(conn: Any, m: Any, env: Any) -> None:
        refuse(m)

    consumers = [mc.Consumer(spec, "recon.pay", sync_handler)]
    loop = mk.KafkaConsumerLoop(b, "sync", consumers, sync_db, namespace=ns, partitions=1)
    try:
        sync_wait(lambda: loop.counts.dead_lettered == 5, loop.step, "5 sync dead letters")
    finally:
        loop.close()

    def metas(group: str) -> list[dict[str, Any]]:
        out = []
        for m in read_topic(b, mk.dlq_topic(ns, "order-event"), 10):
            meta = dlq_meta(m)
            if meta["group"] == group:
                for k in ("first_failed_at", "last_failed_at", "dead_at", "group"):
                    del meta[k]
                meta["value"] = m.value()
                meta["error"] = meta["error"].replace(f"group {group!r}", "group G")
                out.append(meta)
        return sorted(out, key=lambda x: (x["reason"], x["biz_key"], x["error"]))

    got = metas("async")
    assert [(x["reason"], x["code"]) for x in got] == [
        ("decode", -3), ("decode", -3), ("no_handler", -4), ("non_retryable", 40001), ("schema", -5)]
    refused = got[3]
    assert (refused["handler"], refused["attempts"], refused["biz_key"]) == (
        "recon.pay", 1, "order_id:refused:PAY_SUCCESS")
    assert got == metas("sync")


def test_async_member_and_sync_loop_share_one_group(tmp_path: pathlib.Path, spec: Any, pb: Any, ns: str) -> None:
    """A KafkaConsumerLoop (in a thread) and an async member in one group: cooperative-sticky both,
    each event applied once."""
    b = brokers()
    path = str(tmp_path / "biz.db")
    loop = mk.KafkaConsumerLoop(b, "recon", [mc.Consumer(spec, "recon.pay", lambda c, m, e: c.execute(
        "INSERT INTO effects (biz_key, order_id) VALUES (?, ?)", (e.biz_key, m.order_id)))],
        sync_sqlite_db(path), namespace=ns, partitions=4)
    seen = Outcomes()
    done = threading.Event()
    errors: list[BaseException] = []

    def sync_member() -> None:
        try:
            while not done.is_set():
                loop.step(0.05)
        except BaseException as e:  # reported by the test
            errors.append(e)
        finally:
            loop.close()

    t = threading.Thread(target=sync_member)
    t.start()

    async def main() -> None:
        db = await sqlite_db(path)
        sub = await KafkaSubscription.open(b, "recon", [spec], namespace=ns, partitions=4)

        async def publish_when_both_hold(task: asyncio.Task[None]) -> None:
            await until(lambda: bool(sub.assigned) and bool(loop.assigned), "both members hold partitions", task=task)
            assert not set(sub.assigned) & set(loop.assigned)
            await asyncio.to_thread(publish_orders, b, ns, 4, spec, pb, 40, 2)

        await consume_until(consumer(spec, record_effect, seen), sub, db,
                            lambda: effects(path)[0] >= 40 and seen["handled"] + seen["deduplicated"] +
                            loop.counts.processed + loop.counts.deduped >= 80, "80 deliveries", publish_when_both_hold)
        await db.close()

    try:
        run(main)
    finally:
        done.set()
        t.join()
    assert not errors, errors
    assert seen["handled"] + loop.counts.processed == 40
    assert effects(path) == (40, 40)


def test_async_duplicate_to_two_members_at_once(tmp_path: pathlib.Path, spec: Any, pb: Any, ns: str) -> None:
    """Every record reaches two async members at once (two groups, one handler name, one database)."""
    b = brokers()
    publish_orders(b, ns, 2, spec, pb, 40, times=2)
    path = str(tmp_path / "biz.db")
    seen = [Outcomes(), Outcomes()]

    async def main() -> None:
        db = await sqlite_db(path, size=8)
        subs = [await KafkaSubscription.open(b, g, [spec], namespace=ns, partitions=2) for g in ("recon-a", "recon-b")]
        await asyncio.gather(*(consume_until(consumer(spec, record_effect, o), s, db,
                                             lambda o=o: o["handled"] + o["deduplicated"] >= 80, "80 deliveries")
                               for s, o in zip(subs, seen, strict=True)))
        await db.close()

    run(main)
    assert sum(o["handled"] for o in seen) == 40
    assert sum(o["deduplicated"] for o in seen) == 120
    assert effects(path) == (40, 40)


def test_async_postgres_32_handlers(spec: Any, pb: Any, ns: str) -> None:
    """asyncpg with 32 handlers in flight: every event, published twice, applied once."""
    dsn = os.environ.get("MSGCONTRACT_PG_DSN", "")
    if not dsn:
        pytest.fail("MSGCONTRACT_PG_DSN is not set: run through `make test-kafka-python` (scripts/with-postgres.sh)")
    b = brokers()
    schema = ns.replace(".", "").replace("-", "_")
    publish_orders(b, ns, 4, spec, pb, 100, times=2)
    seen = Outcomes()

    async def main() -> tuple[int, int]:
        import asyncpg

        admin = await asyncpg.connect(dsn)
        await admin.execute(f"CREATE SCHEMA {schema}")
        await admin.execute(f"SET search_path = {schema}")
        await admin.execute(CREATE_EFFECTS)
        # asyncpg passes unknown DSN parameters as server settings.
        db = await PostgresDatabase.open(dsn + ("&" if "?" in dsn else "?") + f"search_path={schema}", size=32)
        sub = await KafkaSubscription.open(b, "recon", [spec], namespace=ns, partitions=4)
        await consume_until(consumer(spec, record_effect, seen, concurrency=32), sub, db,
                            lambda: seen["handled"] + seen["deduplicated"] == 200, "200 deliveries")
        await db.close()
        row = await admin.fetchrow("SELECT count(*), count(DISTINCT biz_key) FROM effects")
        await admin.close()
        assert row is not None
        return int(row[0]), int(row[1])

    assert run(main) == (100, 100)
    assert (seen["handled"], seen["deduplicated"]) == (100, 100)


def test_async_cancelled_mid_handler_is_redelivered(tmp_path: pathlib.Path, spec: Any, pb: Any, ns: str) -> None:
    """A run cancelled with every handler in flight applies nothing and commits nothing; the next run
    applies all once."""
    b = brokers()
    n = 6
    publish_orders(b, ns, 2, spec, pb, n)
    path = str(tmp_path / "biz.db")
    started: list[str] = []

    async def stuck(tx: Any, m: Any, env: Any) -> None:
        await record_effect(tx, m, env)
        started.append(m.order_id)
        await asyncio.sleep(3600)

    async def first() -> None:
        db = await sqlite_db(path, size=n)
        sub = await KafkaSubscription.open(b, "recon", [spec], namespace=ns, partitions=2)
        task = asyncio.create_task(consumer(spec, stuck, Outcomes(), concurrency=n).run(sub, db))
        try:
            # SQLite has one writer: one handler is inside its transaction, the rest wait for it.
            await until(lambda: len(started) == 1 and len(sub._out) == n, "every record in flight", task=task)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            assert sub.counts.acked == 0
        finally:
            await sub.close()
            await db.close()

    run(first)
    assert effects(path) == (0, 0), "the cancelled transaction rolled back"
    offsets = committed(b, ns + "recon", ns + "order-event")
    assert all(o <= 0 for o in offsets.values()), f"nothing committed past the first record: {offsets}"

    seen = Outcomes()

    async def second() -> None:
        db = await sqlite_db(path)
        sub = await KafkaSubscription.open(b, "recon", [spec], namespace=ns, partitions=2)
        await consume_until(consumer(spec, record_effect, seen), sub, db, lambda: seen["handled"] == n, "redelivered")
        await db.close()

    run(second)
    assert effects(path) == (n, n)
    assert seen["deduplicated"] == 0


def test_async_revocation_with_handlers_in_flight(
    tmp_path: pathlib.Path, spec: Any, pb: Any, ns: str, caplog: pytest.LogCaptureFixture,
) -> None:
    """A second member joins while the first has slow handlers in flight: the revoked partitions' records
    finish and are committed before they move, and nothing is applied twice or lost.

    On a loaded machine the first member can miss the rebalance deadline, and the broker then refuses
    its commit (ILLEGAL_GENERATION): those records are redelivered to the second member and
    deduplicated, which the runtime logs. Only such a logged refusal may explain a duplicate.
    """
    b = brokers()
    n = 200
    path = str(tmp_path / "biz.db")
    publish_orders(b, ns, 4, spec, pb, n)
    seen = [Outcomes(), Outcomes()]
    revoked: list[int | None] = []

    async def slow(tx: Any, m: Any, env: Any) -> None:
        await record_effect(tx, m, env)
        await asyncio.sleep(0.05)

    async def main() -> None:
        db = await sqlite_db(path, size=8)
        first = await KafkaSubscription.open(b, "recon", [spec], namespace=ns, partitions=4)
        stop = asyncio.Event()
        t1 = asyncio.create_task(consumer(spec, slow, seen[0], concurrency=8).run(first, db, stop))
        second: KafkaSubscription | None = None
        t2: asyncio.Task[None] | None = None
        try:
            await until(lambda: seen[0]["handled"] >= 5, "the first member is busy", task=t1)
            second = await KafkaSubscription.open(b, "recon", [spec], namespace=ns, partitions=4)
            t2 = asyncio.create_task(consumer(spec, slow, seen[1], concurrency=8).run(second, db, stop))
            await until(lambda: effects(path)[0] >= n, "every event applied", task=t1)
            revoked.append(len(first.assigned))
            stop.set()
            await asyncio.gather(t1, t2)
        finally:
            for t in (t1, t2):
                if t is not None:
                    t.cancel()
                    await asyncio.gather(t, return_exceptions=True)
            await first.close()
            if second is not None:
                await second.close()
            await db.close()

    run(main)
    assert effects(path) == (n, n)
    assert seen[0]["handled"] + seen[1]["handled"] == n
    refused = [r.getMessage() for r in caplog.records if "kafka commit failed" in r.getMessage()]
    assert seen[0]["deduplicated"] + seen[1]["deduplicated"] == 0 or refused, \
        "records were redelivered though every commit succeeded: the revoked records in flight were not committed"
    assert revoked[0] is not None and revoked[0] < 8, "the first member gave partitions up"
