"""On the real broker: KafkaConsumerLoop's consumer-lag gauge, and two outbox relays on one PostgreSQL database."""

from __future__ import annotations

import asyncio
import collections
import pathlib
import sys
from typing import Any

from prometheus_client import CollectorRegistry

import msgcontract_runtime as mc
from conftest import ROOT, brokers
from kafkahelp import pg_schema, publish_pay, read_topic, record_effect, sqlite_db, wait
from msgcontract_runtime import kafka as mk, outbox
from msgcontract_runtime.observe import PrometheusMetrics

sys.path.insert(0, str(ROOT / "runtime-python" / "tests"))
from outbox_support import Recorder, two_relays_at_once  # noqa: E402


def test_lag_is_reported_after_each_fetch(tmp_path: pathlib.Path, spec: Any, pb: Any, ns: str) -> None:
    """Gauge = the partition's end minus the records fetched so far, as runtime-go sets it; 0 once drained;
    the series goes when the member leaves the group."""
    b = brokers()
    n = 150  # more than one consume() returns (100)
    pub = mk.KafkaPublisher(b, namespace=ns, partitions=1)
    for i in range(n):
        publish_pay(pub, spec, pb, f"o-{i}")
    pub.close()
    reg = CollectorRegistry()
    loop = mk.KafkaConsumerLoop(b, "recon", [mc.Consumer(spec, "recon.pay", record_effect)],
                        sqlite_db(str(tmp_path / "biz.db")), namespace=ns, partitions=1, lag=PrometheusMetrics(reg))
    labels = {"group": "recon", "topic": ns + "order-event", "partition": "0"}

    def lag() -> float | None:
        return reg.get_sample_value("msgcontract_consumer_lag_messages", labels)

    try:
        wait(lambda: loop.counts.processed > 0, loop.step, "a first fetch")
        # one partition, no failure: the records handled are the records fetched
        assert lag() == n - loop.counts.processed and loop.counts.processed < n, (lag(), loop.counts)
        wait(lambda: loop.counts.processed == n, loop.step, "every record handled")
        assert lag() == 0
        assert reg.get_sample_value("msgcontract_consumer_lag_messages", dict(
            labels, topic=mk.retry_topic(ns, "order-event", "recon"))) is None  # nothing fetched there
    finally:
        loop.close()
    assert lag() is None  # leaving the group revoked the partition


def test_two_relays_on_postgres_publish_each_row_once(spec: Any, pb: Any, ns: str) -> None:
    """Two relays, each on its own PostgreSQL connection and producer, run at once on one outbox;
    the topic holds every row exactly once."""
    connect = pg_schema(ns)
    b = brokers()
    conns = [connect() for _ in range(3)]
    outbox.migrate(conns[0], postgres=True)
    ids = []
    for i in range(60):
        env = mc.new_envelope(spec, pb.PaySuccess(order_id=f"o-{i % 13}", amount=i))
        outbox.write(conns[0], env, "format")
        ids.append(env.message_id)
    conns[0].commit()
    pubs = [mk.KafkaPublisher(b, namespace=ns, partitions=2) for _ in range(2)]
    recs = [Recorder(p) for p in pubs]
    try:
        sent = two_relays_at_once(conns[1:], recs, "format")
    finally:
        for p in pubs:
            p.close()
        for c in conns:
            c.close()
    assert sorted(sent) == [0, 60], sent
    on_topic = collections.Counter(mc.decode(m.value()).message_id for m in read_topic(b, ns + "order-event", 60))
    assert on_topic == collections.Counter(ids)


def test_async_subscription_reports_lag_as_the_loop_does(tmp_path: pathlib.Path, spec: Any, pb: Any,
                                                         ns: str) -> None:
    """KafkaSubscription(lag=...) sets the same gauge: the partition's end minus the records fetched, 0 once
    everything is fetched and handled, gone when the member leaves."""
    from aiokafkahelp import Outcomes, record_effect, run, sqlite_db as async_sqlite_db, until
    from msgcontract_runtime.aio import AsyncConsumer
    from msgcontract_runtime.aio.kafka import KafkaSubscription

    b = brokers()
    n = 150
    pub = mk.KafkaPublisher(b, namespace=ns, partitions=1)
    for i in range(n):
        publish_pay(pub, spec, pb, f"o-{i}")
    pub.close()
    reg = CollectorRegistry()
    labels = {"group": "recon", "topic": ns + "order-event", "partition": "0"}

    def lag() -> float | None:
        return reg.get_sample_value("msgcontract_consumer_lag_messages", labels)

    seen = Outcomes()

    async def main() -> None:
        db = await async_sqlite_db(str(tmp_path / "biz.db"))
        sub = await KafkaSubscription.open(b, "recon", [spec], namespace=ns, partitions=1,
                                           lag=PrometheusMetrics(reg))
        try:
            first = await sub.fetch(10, 30.0)
            assert first, "nothing fetched in 30 s"
            fetched = sum(len(o.pending) for o in sub._parts.values())  # not settled yet: every record taken in
            assert lag() == n - fetched and 0 < fetched < n, (lag(), fetched)
            for d in first:
                await sub.release(d)
            c = AsyncConsumer(spec, "recon.pay", record_effect, observer=seen)
            stop = asyncio.Event()
            task = asyncio.create_task(c.run(sub, db, stop))
            await until(lambda: seen["handled"] == n, "every record handled", task=task)
            stop.set()
            await task
            assert lag() == 0
        finally:
            await sub.close()
            await db.close()

    run(main)
    assert lag() is None  # leaving the group revoked the partition
