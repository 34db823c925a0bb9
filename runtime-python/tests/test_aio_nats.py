"""The asyncio consumer on NATS JetStream (nats-py) against a real nats-server, with a SQLite business database.

The server is the one the Go tests embed, built as a binary by
scripts/install-runtime-python.sh (MSGCONTRACT_NATS_SERVER); without it the
tests fail, never skip.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import nats
import pytest

import msgcontract_runtime as mc
from aio_support import SPEC, applied, apply, claims, envelope, open_db
from msgcontract.v1 import envelope_pb2
from msgcontract_runtime.aio import AsyncConsumer, Delivery
from msgcontract_runtime.aio.nats import (
    DLQ_STREAM,
    STREAM,
    JetStreamSubscription,
    _publish,
    create_streams,
    publish,
    retry_subject,
)

Run = Callable[..., Any]


@pytest.fixture
def nats_url(tmp_path: Path) -> Iterator[str]:
    binary = os.environ.get("MSGCONTRACT_NATS_SERVER", "")
    if not binary or not os.access(binary, os.X_OK):
        pytest.fail("MSGCONTRACT_NATS_SERVER names no nats-server binary "
                    "(scripts/install-runtime-python.sh builds one)", pytrace=False)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([binary, "-js", "-a", "127.0.0.1", "-p", str(port), "-sd", str(tmp_path / "js")],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError as e:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError("nats-server did not start") from e
                time.sleep(0.05)
        yield f"nats://127.0.0.1:{port}"
    finally:
        proc.kill()
        proc.wait()


async def streams(url: str) -> Any:
    nc = await nats.connect(url)
    await create_streams(nc.jetstream())
    return nc


async def consume_all(c: AsyncConsumer[Any], sub: JetStreamSubscription, db: Any, done: Callable[[], Any]) -> None:
    """Runs c until done() is true, then stops it gracefully."""
    stop = asyncio.Event()
    task = asyncio.create_task(c.run(sub, db, stop))
    while not await done():
        if task.done():
            task.result()
            raise AssertionError("run returned early")
        await asyncio.sleep(0.02)
    stop.set()
    await task


async def dead_letters(nc: Any) -> list[dict[str, Any]]:
    js = nc.jetstream()
    info = await js.stream_info(DLQ_STREAM)
    out = []
    for seq in range(1, info.state.last_seq + 1):
        m = await js.get_msg(DLQ_STREAM, seq)
        out.append(json.loads(m.data or b"{}"))
    return out


def test_nats_retry_poison_and_redelivery(arun: Run, tmp_path: Path, nats_url: str) -> None:
    """Retry then success, poison dead-lettered as Go's dlq.Record, nothing applied twice."""

    async def handler(tx: Any, m: envelope_pb2.LastError, env: envelope_pb2.Envelope) -> None:
        await apply(tx, m, env)
        if m.range == "flaky" and env.retry_count == 0:
            raise SPEC.rules.error(50301, "down")
        if m.range == "business":
            raise SPEC.rules.error(40001, "closed")

    async def main() -> None:
        nc = await streams(nats_url)
        db = await open_db("sqlite", str(tmp_path / "b.db"))
        sub = await JetStreamSubscription.connect(nats_url, "g.1", [SPEC.topic])
        js = nc.jetstream()
        envs = [envelope(k) for k in ("ok", "flaky", "business")]
        for e in envs + [envs[0]]:  # ok twice: a duplicate
            await publish(js, SPEC.topic, e)

        async def settled() -> bool:
            info = await js.consumer_info(STREAM, "g_1")
            return (await applied(db)) == {"range:ok": 1, "range:flaky": 1} and info.num_ack_pending == 0 \
                and info.num_pending == 0

        await consume_all(AsyncConsumer(SPEC, "h", handler, concurrency=4), sub, db, settled)
        assert await claims(db) == 2
        dl = await dead_letters(nc)
        assert [(r["message_id"], r["reason"], r["code"], r["group"]) for r in dl] == [
            (envs[2].message_id, "non_retryable", 40001, "g.1")]
        await sub.close()
        await db.close()
        await nc.close()

    arun(main)


def test_nats_crash_between_retry_publish_and_ack_keeps_one_chain(arun: Run, tmp_path: Path, nats_url: str) -> None:
    """Every stored copy's first retry publishes its copy and "crashes" before the ack (as runtime-go's
    TestRetryChainFork): JetStream delivers it again after the ack wait, with its Nats-Msg-Id, it fails
    again and publishes a second copy of the attempt. The chain lets one copy of each attempt go on: one
    dead letter per message (four without it), the other copies deduplicated."""
    seen: list[mc.Outcome] = []

    async def fail(tx: Any, m: envelope_pb2.LastError, env: envelope_pb2.Envelope) -> None:
        raise SPEC.rules.error(50301, "down")

    async def main() -> None:
        nc = await streams(nats_url)
        db = await open_db("sqlite", str(tmp_path / "b.db"))
        sub = await JetStreamSubscription.connect(nats_url, "g", [SPEC.topic], ack_wait_s=1.0)
        crashed: set[str] = set()
        retry = sub.retry

        async def forking(d: Delivery, env: envelope_pb2.Envelope) -> None:
            if d.delivery_id in crashed:
                await retry(d, env)
                return
            assert d.delivery_id
            crashed.add(d.delivery_id)
            await _publish(sub.js, retry_subject(sub.group, d.topic), mc.encode(env), STREAM)  # then no ack

        setattr(sub, "retry", forking)
        js = nc.jetstream()
        envs = [envelope(k) for k in ("a", "b")]
        for e in envs:
            await publish(js, SPEC.topic, e)

        async def settled() -> bool:
            info = await js.consumer_info(STREAM, "g")
            return len(await dead_letters(nc)) >= 2 and info.num_ack_pending == 0 and info.num_pending == 0

        await consume_all(AsyncConsumer(SPEC, "h", fail, concurrency=4, observer=seen.append), sub, db, settled)
        await asyncio.sleep(2.5)  # a forked chain's extra dead letters would come within the ack wait
        dl = await dead_letters(nc)
        assert sorted(r["message_id"] for r in dl) == sorted(e.message_id for e in envs), dl
        assert {r["attempts"] for r in dl} == {3}
        assert len(crashed) == 4, "each message's first delivery and first retry copy crashed once"
        assert sum(o.label == "deduplicated" for o in seen) >= 2
        await sub.close()
        await db.close()
        await nc.close()

    arun(main)


def test_nats_cancelled_mid_handler_is_redelivered(arun: Run, tmp_path: Path, nats_url: str) -> None:
    started: list[str] = []

    async def stuck(tx: Any, m: envelope_pb2.LastError, env: envelope_pb2.Envelope) -> None:
        await apply(tx, m, env)
        started.append(env.biz_key)
        await asyncio.sleep(3600)

    async def main() -> None:
        nc = await streams(nats_url)
        db = await open_db("sqlite", str(tmp_path / "b.db"))
        js = nc.jetstream()
        for i in range(3):
            await publish(js, SPEC.topic, envelope(f"c{i}"))
        sub = await JetStreamSubscription.connect(nats_url, "g", [SPEC.topic])
        run = asyncio.create_task(AsyncConsumer(SPEC, "h", stuck, concurrency=3).run(sub, db))
        while not started:
            assert not run.done(), run
            await asyncio.sleep(0.01)
        run.cancel()
        with pytest.raises(asyncio.CancelledError):
            await run
        assert await applied(db) == {}
        assert await claims(db) == 0
        # Released with a NAK, not left to the 60 s ack wait: redelivered at once.
        t0 = time.monotonic()

        async def all_applied() -> bool:
            return await applied(db) == {f"range:c{i}": 1 for i in range(3)}

        await consume_all(AsyncConsumer(SPEC, "h", apply, concurrency=3), sub, db, all_applied)
        assert time.monotonic() - t0 < 30, "redelivered only after the ack wait"
        await sub.close()
        await db.close()
        await nc.close()

    arun(main)


def test_nats_decode_failure_is_dead_lettered(arun: Run, tmp_path: Path, nats_url: str) -> None:
    async def main() -> None:
        nc = await streams(nats_url)
        db = await open_db("sqlite", str(tmp_path / "b.db"))
        js = nc.jetstream()
        await js.publish(f"msgcontract.topic.{SPEC.topic}", b"\xff\x01", stream=STREAM)
        sub = await JetStreamSubscription.connect(nats_url, "g", [SPEC.topic])

        async def one_dead() -> bool:
            return len(await dead_letters(nc)) == 1

        await consume_all(AsyncConsumer(SPEC, "h", apply), sub, db, one_dead)
        (r,) = await dead_letters(nc)
        assert (r["reason"], r["code"], r["attempts"], r["topic"]) == ("decode", mc.CODE_DECODE, 0, SPEC.topic)
        await sub.close()
        await db.close()
        await nc.close()

    arun(main)
