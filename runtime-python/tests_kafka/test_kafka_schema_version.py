"""A framed record's envelope names the version its schema id is registered as.

A generated producer leaves schema_version 0 and frames with the id of the
subject's latest version at the time. The consumers (KafkaConsumerLoop and the
asyncio KafkaSubscription) give such an envelope the version the frame's id
is registered as, so the handler and the dead letter name it even after a
newer version was registered; a version the producer's envelope names is
kept, even when the frame's id is another version's. Run against
msgcontract's registry (MSGCONTRACT_REGISTRY_URL, started by
integration/kafkainterop's TestPythonKafkaSuite), on a subject of the test's own.
"""

from __future__ import annotations

import asyncio
import json
import pathlib
import urllib.request
from typing import Any

import msgcontract_runtime as mc
from aiokafkahelp import Outcomes, run, sqlite_db as aio_sqlite_db, until
from conftest import ROOT, brokers
from kafkahelp import dlq_meta, read_topic, sqlite_db, wait
from msgcontract_runtime import kafka as mk, wire
from msgcontract_runtime.aio import AsyncConsumer
from msgcontract_runtime.aio.kafka import KafkaSubscription
from test_kafka_registry import registry_url

PROTO = ROOT / "examples/proto/shop/payment/v1/payment.proto"


def register(subject: str, text: str) -> tuple[int, int]:
    """Registers text under subject; returns (schema id, version)."""
    def post(path: str) -> dict[str, Any]:
        req = urllib.request.Request(
            f"{registry_url()}/subjects/{subject}{path}", method="POST",
            data=json.dumps({"schema": text, "schemaType": "PROTOBUF"}).encode(),
            headers={"Content-Type": "application/vnd.schemaregistry.v1+json"})
        with urllib.request.urlopen(req, timeout=10) as r:
            return dict(json.loads(r.read()))

    return int(post("/versions")["id"]), int(post("")["version"])


def publish(ns: str, spec: Any, pb: Any) -> str:
    """v1 of a subject of ns's own; two records framed with v1's id: "unnamed" names no version,
    "named" says v2. Then v2 is registered. Returns the subject."""
    subject = ns.rstrip(".") + "-pay-value"
    v1 = PROTO.read_text()
    v1_id, n = register(subject, v1)
    assert n == 1
    pub = mk.KafkaPublisher(brokers(), namespace=ns, partitions=1)
    try:
        pub._ensure(ns + "order-event")
        for order_id, version in (("unnamed", 0), ("named", 2)):
            env = mc.new_envelope(spec, pb.PaySuccess(order_id=order_id, amount=1, currency="EUR"))
            env.schema_subject, env.schema_version = subject, version
            head, payload = wire.split(env)
            pub._p.produce(ns + "order-event", env.biz_key.encode(), wire.frame(v1_id, [0], payload),
                           [(wire.HEADER_ENVELOPE, head)])
    finally:
        pub.close()
    v2 = v1.replace("string currency = 3;\n}", "string currency = 3;\n  string note = 4;\n}", 1)
    assert v2 != v1, "the example contract's PaySuccess no longer ends with currency = 3"
    v2_id, n = register(subject, v2)
    assert n == 2 and v2_id != v1_id
    return subject


WANT = {"order_id:unnamed:PAY_SUCCESS": 1, "order_id:named:PAY_SUCCESS": 2}


def check_dead_letters(ns: str, group: str, subject: str) -> None:
    got = {}
    for m in read_topic(brokers(), mk.dlq_topic(ns, "order-event"), 2):
        meta = dlq_meta(m)
        if meta["group"] != group:
            continue
        assert meta["reason"] == "non_retryable", meta
        env = mc.decode(m.value())
        got[env.biz_key] = (env.schema_subject, env.schema_version)
    assert got == {k: (subject, v) for k, v in WANT.items()}


def refuse(seen: list[tuple[str, str, int]], env: Any) -> None:
    seen.append((env.biz_key, env.schema_subject, env.schema_version))
    raise mc.NonRetryableError(40001, "business", "order unknown")


def test_loop_names_the_framed_version(tmp_path: pathlib.Path, spec: Any, pb: Any, ns: str) -> None:
    subject = publish(ns, spec, pb)
    seen: list[tuple[str, str, int]] = []
    consumers = [mc.Consumer(spec, "recon.pay", lambda c, m, env: refuse(seen, env))]
    loop = mk.KafkaConsumerLoop(brokers(), "recon", consumers, sqlite_db(str(tmp_path / "biz.db")),
                                namespace=ns, registry_url=registry_url(), partitions=1)
    try:
        wait(lambda: loop.counts.dead_lettered >= 2, loop.step, "2 dead letters")
    finally:
        loop.close()
    assert sorted(seen) == sorted((k, subject, v) for k, v in WANT.items()), "what the handler saw"
    check_dead_letters(ns, "recon", subject)


def test_async_subscription_names_the_framed_version(tmp_path: pathlib.Path, spec: Any, pb: Any, ns: str) -> None:
    subject = publish(ns, spec, pb)
    seen: list[tuple[str, str, int]] = []
    outcomes = Outcomes()

    async def handler(tx: Any, m: Any, env: Any) -> None:
        refuse(seen, env)

    async def main() -> None:
        db = await aio_sqlite_db(str(tmp_path / "biz.db"))
        sub = await KafkaSubscription.open(brokers(), "async", [spec], namespace=ns, registry_url=registry_url(),
                                           partitions=1)
        c = AsyncConsumer(spec, "recon.pay", handler, observer=outcomes)
        stop = asyncio.Event()
        task = asyncio.create_task(c.run(sub, db, stop))
        try:
            await until(lambda: sub.counts.dead_lettered >= 2, "2 dead letters", task=task)
            stop.set()
            await task
        finally:
            task.cancel()
            await sub.close()
            await db.close()

    run(main)
    assert sorted(seen) == sorted((k, subject, v) for k, v in WANT.items()), "what the handler saw"
    check_dead_letters(ns, "async", subject)
