"""NATS JetStream for the asyncio consumer (nats-py), laid out as runtime-go's natsjs transport.

Topic T is published on ``msgcontract.topic.T`` in stream ``MSGCONTRACT``;
group G is the durable pull consumer ``G`` (``.*> `` replaced by ``_``) on
its topics and its retry subjects ``msgcontract.retry.G.T``; dead-letter
records are Go's ``dlq.Record`` JSON on ``msgcontract-dlq.G.T`` in stream
``MSGCONTRACT_DLQ``. The Go runtime's ``natsjs.New`` creates the streams
(``create_streams`` does too, for a Python-only setup). Install with the
``nats`` extra.
"""

from __future__ import annotations

import asyncio
import base64
import json
import time
from collections.abc import Sequence
from typing import Any

import nats
from nats.aio.client import Client
from nats.js import JetStreamContext, api

from msgcontract.v1 import envelope_pb2 as _envelope_pb2
from msgcontract_runtime.aio import DeadLetterRecord, Delivery
from msgcontract_runtime.envelope import encode, new_message_id

STREAM = "MSGCONTRACT"
DLQ_STREAM = STREAM + "_DLQ"
PREFIX = "msgcontract"
ACK_WAIT_S = 60.0
"""The lease (natsjs.Config.AckWait's default); keep Go's and Python's equal."""
ACK_CONFIRM_S = 30.0
MAX_ACK_PENDING = 10_000
ZERO_TIME = "0001-01-01T00:00:00Z"


def consumer_name(group: str) -> str:
    """The durable consumer name of group (natsjs.consumerName)."""
    for c in ".*> ":
        group = group.replace(c, "_")
    return group


def retry_subject(group: str, topic: str) -> str:
    return f"{PREFIX}.retry.{consumer_name(group)}.{topic}"


def topic_of(subject: str) -> str:
    """The topic a message was published to, from its topic or retry subject ("" for neither)."""
    topic_prefix, retry_prefix = f"{PREFIX}.topic.", f"{PREFIX}.retry."
    if subject.startswith(topic_prefix):
        return subject[len(topic_prefix):]
    if subject.startswith(retry_prefix):
        # msgcontract.retry.<group>.<topic>: the topic follows the group.
        return subject[len(retry_prefix):].partition(".")[2]
    return ""


def go_time(ms: int) -> str:
    """Unix milliseconds as Go's time.Time JSON (RFC 3339, UTC)."""
    seconds, millis = divmod(ms, 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{millis:03d}Z"


async def create_streams(js: JetStreamContext) -> None:
    """Creates the message and dead-letter streams as natsjs.New does (for a setup without Go)."""
    await js.add_stream(name=STREAM, subjects=[f"{PREFIX}.>"])
    await js.add_stream(name=DLQ_STREAM, subjects=[f"{PREFIX}-dlq.>"])


async def publish(js: JetStreamContext, topic: str, env: _envelope_pb2.Envelope) -> None:
    """Publishes env on topic's subject, waiting for the stream to store it."""
    await _publish(js, f"{PREFIX}.topic.{topic}", encode(env), STREAM)


async def _publish(js: JetStreamContext, subject: str, body: bytes, stream: str) -> None:
    # A fresh Nats-Msg-Id: JetStream's duplicate window must never drop a retry.
    await js.publish(subject, body, stream=stream, headers={"Nats-Msg-Id": new_message_id()})


class JetStreamSubscription:
    """Group G's durable pull consumer; the Subscription AsyncConsumer.run uses."""

    def __init__(self, nc: Client, js: JetStreamContext, sub: JetStreamContext.PullSubscription, group: str) -> None:
        self.nc = nc
        self.js = js
        self.sub = sub
        self.group = group

    @classmethod
    async def connect(
        cls, url: str, group: str, topics: Sequence[str], ack_wait_s: float = ACK_WAIT_S
    ) -> JetStreamSubscription:
        """Connects and creates or updates group's consumer (a new one starts at the oldest message)."""
        nc = await nats.connect(url)
        js = nc.jetstream()
        name = consumer_name(group)
        filters: list[str] = []
        for t in topics:
            filters += [f"{PREFIX}.topic.{t}", retry_subject(group, t)]
        config = api.ConsumerConfig(
            name=name, durable_name=name, filter_subjects=filters, ack_policy=api.AckPolicy.EXPLICIT,
            ack_wait=ack_wait_s, max_deliver=-1, deliver_policy=api.DeliverPolicy.ALL, max_ack_pending=MAX_ACK_PENDING,
        )
        try:
            await js.add_consumer(STREAM, config)
            sub = await js.pull_subscribe_bind(durable=name, stream=STREAM)
        except BaseException:
            await nc.close()
            raise
        return cls(nc, js, sub, group)

    async def close(self) -> None:
        """Unsubscribes and disconnects; unsettled messages are redelivered after the ack wait."""
        await self.sub.unsubscribe()
        await self.nc.flush()
        await self.nc.close()

    async def fetch(self, max_count: int, wait_s: float) -> Sequence[Delivery]:
        try:
            msgs = await self.sub.fetch(max_count, timeout=max(wait_s, 0.05))
        except asyncio.TimeoutError:  # nats.errors.TimeoutError is one too
            return []
        # The Nats-Msg-Id names the stored message on each redelivery: the
        # delivery id of its retry chain (retry publishes, then acks).
        return [Delivery(topic_of(m.subject), m.data, int(m.metadata.num_delivered), m,
                         (m.headers or {}).get("Nats-Msg-Id", "")) for m in msgs]

    async def ack(self, d: Delivery) -> None:
        # Waits for the server's confirmation: a plain ack may be lost at exit.
        await d.handle.ack_sync(timeout=ACK_CONFIRM_S)

    async def defer(self, d: Delivery, not_before_ms: int) -> None:
        await d.handle.nak(delay=max(0, not_before_ms - int(time.time() * 1000)) / 1000)

    async def release(self, d: Delivery) -> None:
        await d.handle.nak()

    async def retry(self, d: Delivery, env: _envelope_pb2.Envelope) -> None:
        # Publish, then ack: a crash between redelivers d, whose next failure
        # AsyncConsumer's retry chain stops from publishing a second copy.
        await _publish(self.js, retry_subject(self.group, env.topic or d.topic), encode(env), STREAM)
        await self.ack(d)

    async def dead_letter(self, d: Delivery, r: DeadLetterRecord) -> None:
        record: dict[str, Any] = {
            "topic": r.topic, "group": self.group, "handler": r.handler, "event_type": r.event_type,
            "biz_key": r.biz_key, "message_id": r.message_id,
            "envelope": base64.b64encode(r.envelope).decode("ascii"), "reason": r.reason, "code": r.code,
            "error": r.error, "attempts": r.attempts, "first_failed_at": go_time(r.first_failed_at),
            "last_failed_at": go_time(r.last_failed_at), "dead_at": go_time(r.dead_at),
            "replay_count": 0, "last_replayed_at": ZERO_TIME,
        }
        subject = f"{PREFIX}-dlq.{consumer_name(self.group)}.{r.topic or '_'}"
        await _publish(self.js, subject, json.dumps(record).encode("utf-8"), DLQ_STREAM)
        await self.ack(d)
