"""A schema registry that cannot answer holds Confluent-framed records back, never dead-letters them.

The records are framed against the real registry (msgcontract's, started by
integration/kafkainterop's TestPythonKafkaSuite with the example payment
contract as order-event-value); the consumers ask it through a proxy that
answers 503 to the first three schema-id look-ups, as a registry does while
it restarts, and passes the rest through.
"""

from __future__ import annotations

import asyncio
import http.server
import json
import os
import pathlib
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

import msgcontract_runtime as mc
from aiokafkahelp import (
    Outcomes,
    effects as aio_effects,
    record_effect as aio_record_effect,
    run,
    sqlite_db as aio_sqlite_db,
    until,
)
from conftest import brokers
from kafkahelp import effects, publish_pay, record_effect, sqlite_db, wait
from msgcontract_runtime import kafka as mk
from msgcontract_runtime.aio import AsyncConsumer
from msgcontract_runtime.aio.kafka import KafkaSubscription

REFUSALS = 3


def registry_url() -> str:
    v = os.environ.get("MSGCONTRACT_REGISTRY_URL", "")
    if not v:
        pytest.fail("MSGCONTRACT_REGISTRY_URL is not set: run through `make test-kafka-python`, whose Go test "
                    "starts msgcontract's registry with the example payment contract")
    return v.rstrip("/")


class Flaky:
    """A proxy in front of the registry: 503 for the first REFUSALS schema-id look-ups."""

    def __init__(self, upstream: str) -> None:
        self.refused = 0
        flaky = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                if self.path.startswith("/schemas/ids/") and flaky.refused < REFUSALS:
                    flaky.refused += 1
                    self.answer(503, b'{"error_code":50301,"message":"unavailable"}')
                    return
                try:
                    with urllib.request.urlopen(upstream + self.path, timeout=10) as r:
                        self.answer(r.status, r.read())
                except urllib.error.HTTPError as e:
                    self.answer(e.code, e.read())

            def answer(self, status: int, body: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/vnd.schemaregistry.v1+json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def flaky() -> Iterator[Flaky]:
    f = Flaky(registry_url())
    yield f
    f.close()


def publish_framed(spec: Any, pb: Any, ns: str, order_id: str) -> None:
    pub = mk.KafkaPublisher(brokers(), namespace=ns, registry_url=registry_url(), specs=[spec], partitions=1)
    try:
        publish_pay(pub, spec, pb, order_id)
    finally:
        pub.close()


def test_loop_waits_for_an_unavailable_registry(tmp_path: pathlib.Path, spec: Any, pb: Any, ns: str,
                                               flaky: Flaky) -> None:
    publish_framed(spec, pb, ns, "held")
    db = sqlite_db(str(tmp_path / "biz.db"))
    loop = mk.KafkaConsumerLoop(brokers(), "recon", [mc.Consumer(spec, "recon.pay", record_effect)],
                        db, namespace=ns, registry_url=flaky.url, partitions=1)
    try:
        wait(lambda: loop.counts.processed + loop.counts.dead_lettered >= 1, loop.step, "the record settled")
    finally:
        loop.close()
    assert flaky.refused == REFUSALS, "the loop did not ask the registry again after a 503"
    assert loop.counts.dead_lettered == 0, "a registry that could not answer condemned the record"
    assert effects(db) == (1, 1)


def test_async_subscription_waits_for_an_unavailable_registry(tmp_path: pathlib.Path, spec: Any, pb: Any, ns: str,
                                                             flaky: Flaky) -> None:
    publish_framed(spec, pb, ns, "held")
    path = str(tmp_path / "biz.db")
    seen = Outcomes()

    async def main() -> None:
        db = await aio_sqlite_db(path)
        sub = await KafkaSubscription.open(brokers(), "recon", [spec], namespace=ns, registry_url=flaky.url,
                                           partitions=1)
        c = AsyncConsumer(spec, "recon.pay", aio_record_effect, observer=seen)
        stop = asyncio.Event()
        task = asyncio.create_task(c.run(sub, db, stop))
        try:
            await until(lambda: seen["handled"] + seen["dead_lettered"] >= 1, "the record settled", task=task)
            stop.set()
            await task
        finally:
            task.cancel()
            await sub.close()
            await db.close()

    run(main)
    assert flaky.refused == REFUSALS, "the subscription did not ask the registry again after a 503"
    assert seen["dead_lettered"] == 0, "a registry that could not answer condemned the record"
    assert aio_effects(path) == (1, 1)


def test_publisher_names_a_missing_reference(spec: Any, pb: Any, ns: str) -> None:
    """A contract registered by a bare POST (no reference for msgcontract's
    options) cannot be read by confluent-kafka's serializer: the publisher
    says so and how to register it instead of confluent-kafka's pool error."""
    subject = ns + "bare-value"
    with open(os.path.join(os.path.dirname(__file__), "..", "..", "examples", "proto", "shop", "payment", "v1",
                           "payment.proto")) as f:
        text = f.read()
    req = urllib.request.Request(
        registry_url() + "/subjects/" + subject + "/versions",
        data=json.dumps({"schemaType": "PROTOBUF", "schema": text}).encode(),
        headers={"Content-Type": "application/vnd.schemaregistry.v1+json"}, method="POST")
    with urllib.request.urlopen(req, timeout=10) as r:
        assert r.status == 200
    pub = mk.KafkaPublisher(brokers(), namespace=ns, registry_url=registry_url(), specs=[spec], partitions=1)
    try:
        env = mc.new_envelope(spec, pb.PaySuccess(order_id="bare", amount=1, currency="EUR"))
        env.schema_subject = subject
        with pytest.raises(ValueError, match="msgcontract registry push"):
            pub.record(spec.topic, env)
    finally:
        pub.close()
