"""One consumer group on NATS JetStream, laid out exactly as runtime-go's natsjs transport.

The reconciliation service uses this module under ``--nats URL``; it is the
Python twin of runtime-go/transport/natsjs, so a Go and a Python consumer can
share one JetStream stream, each in a group of its own. The layout, all of
which must stay in step with the Go transport:

- Stream ``MSGCONTRACT`` holds every subject under ``msgcontract.``: topic T
  is published on ``msgcontract.topic.T``; group G's retries go to
  ``msgcontract.retry.<G>.T``, which only G's consumer reads, so a retry never
  reaches another group.
- Group G is the durable pull consumer ``<G>`` (dots, wildcards and spaces
  replaced by ``_``) on the stream, filtered on its topics and its retry
  subjects, with explicit acks.
- A message not due yet (its envelope's not_before is in the future) is
  handed back with a delayed NAK.
- Dead-letter records go to stream ``MSGCONTRACT_DLQ`` on
  ``msgcontract-dlq.<G>.T`` as Go's ``dlq.Record`` in its JSON form, so
  ``msgcontract dlq list`` and the demo's summary read Python's dead letters
  like Go's.
- Every publish carries a fresh ``Nats-Msg-Id``, so JetStream's duplicate
  window never drops a retry.

The streams belong to the Go runtime (``natsjs.New`` creates them); this
module only creates or updates its group's consumer, with the configuration
natsjs gives it.
"""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import json
import time
from typing import Any

from nats.aio.client import Client
from nats.aio.msg import Msg
from nats.js import JetStreamContext

import msgcontract_runtime as mc

# The layout's names and defaults live in the runtime's asyncio JetStream
# transport, the one home shared with this example.
from msgcontract_runtime.aio.nats import (  # noqa: F401  (some re-exported for the interop test)
    ACK_CONFIRM_S,
    ACK_WAIT_S,
    DLQ_STREAM,
    MAX_ACK_PENDING,
    PREFIX,
    STREAM,
    ZERO_TIME,
    JetStreamSubscription,
    consumer_name,
    go_time,
    retry_subject as _retry_subject,
    topic_of,
)

FETCH_WAIT_S = 0.5
"""How long one fetch waits for messages: it bounds how late a stop is noticed."""


@dataclasses.dataclass(frozen=True)
class Delivery:
    """One message fetched from the group's consumer."""

    msg: Msg
    topic: str  # the topic it was published to, for a retry too
    body: bytes  # the encoded envelope, exactly as published


class JetStreamQueue:
    """One consumer group of the JetStream layout above.

    Create it with ``await JetStreamQueue.connect(url, group, topics)`` and
    release it with ``await close()``.
    """

    def __init__(self, nc: Client, js: JetStreamContext, sub: JetStreamContext.PullSubscription, group: str) -> None:
        self.nc = nc
        self.js = js
        self.sub = sub
        self.group = group

    @classmethod
    async def connect(cls, url: str, group: str, topics: list[str]) -> JetStreamQueue:
        """Connects to url and creates or updates group's durable consumer on topics.

        Like natsjs's Subscribe: a new consumer starts with the oldest message
        still in the stream; an existing one keeps its position.
        """
        s = await JetStreamSubscription.connect(url, group, topics, ACK_WAIT_S)
        return cls(s.nc, s.js, s.sub, group)

    async def close(self) -> None:
        """Stops fetching, sends the acknowledgements still buffered, and disconnects.

        A message the server had already sent but nobody handled stays
        unacknowledged and is redelivered after ACK_WAIT_S. (nc.drain()
        would wait for the pull subscription to drain, up to its 30 s
        timeout.)
        """
        await self.sub.unsubscribe()
        await self.nc.flush()
        await self.nc.close()

    async def fetch(self, limit: int) -> list[Delivery]:
        """Returns up to limit deliveries; an empty list after FETCH_WAIT_S without any."""
        try:
            msgs = await self.sub.fetch(limit, timeout=FETCH_WAIT_S)
        except asyncio.TimeoutError:  # nats.errors.TimeoutError is one too; nats-py raises either
            return []
        return [Delivery(m, topic_of(m.subject), m.data) for m in msgs]

    async def settle(self, d: Delivery, decision: mc.Decision, handler: str, env: Any | None) -> None:
        """Carries out the consumer's decision for d (env: the decoded envelope, if it decoded)."""
        if isinstance(decision, mc.Ack):
            await self.ack(d)
        elif isinstance(decision, mc.Defer):
            await self.defer(d, decision.not_before_ms)
        elif isinstance(decision, mc.Retry):
            await self.retry(d, decision.next_envelope)
        else:
            await self.dead_letter(d, handler, env, decision)

    async def ack(self, d: Delivery) -> None:
        """Settles d as done, once the server has confirmed the acknowledgement.

        A plain ack is sent and forgotten: the server may not have processed
        it when the process exits, and the message then still counts as in
        flight (and is redelivered after ACK_WAIT_S if the ack was lost).
        """
        await d.msg.ack_sync(timeout=ACK_CONFIRM_S)

    async def defer(self, d: Delivery, not_before_ms: int) -> None:
        """Hands d back unacknowledged, redelivered once not_before_ms has passed."""
        delay_s = max(0, not_before_ms - int(time.time() * 1000)) / 1000
        await d.msg.nak(delay=delay_s)

    async def retry(self, d: Delivery, env: Any) -> None:
        """Publishes env (the retry copy of d's message) on the group's retry subject, then acks d.

        A crash between the two leaves a second copy; the consumer's dedup
        claim absorbs it.
        """
        await self._publish(_retry_subject(self.group, env.topic or d.topic), mc.encode(env), STREAM)
        await self.ack(d)

    async def dead_letter(self, d: Delivery, handler: str, env: Any | None, dl: mc.DeadLetter) -> None:
        """Stores a dead-letter record for d in the dead-letter stream, then acks d.

        The record is Go's dlq.Record in its JSON form: snake_case names,
        the envelope in standard base64, times in RFC 3339 (UTC). It has no
        "id": a record's id is its sequence number in the stream.
        """
        now = int(time.time() * 1000)
        topic = env.topic if env is not None and env.topic else d.topic
        first = env.first_failed_at if env is not None and env.first_failed_at else now
        record = {
            "topic": topic,
            "group": self.group,
            "handler": handler,
            "event_type": env.event_type if env is not None else "",
            "biz_key": env.biz_key if env is not None else "",
            "message_id": env.message_id if env is not None else "",
            "envelope": base64.b64encode(d.body).decode("ascii"),
            "reason": dl.reason,
            "code": dl.code,
            "error": dl.error,
            "attempts": dl.attempts,
            "first_failed_at": go_time(first),
            "last_failed_at": go_time(now),
            "dead_at": go_time(now),
            "replay_count": 0,
            "last_replayed_at": ZERO_TIME,
        }
        subject = f"{PREFIX}-dlq.{consumer_name(self.group)}.{topic or '_'}"
        await self._publish(subject, json.dumps(record).encode("utf-8"), DLQ_STREAM)
        await self.ack(d)

    async def _publish(self, subject: str, body: bytes, stream: str) -> None:
        # js.publish waits for the stream's acknowledgement: once it returns,
        # the message is stored and acking the delivery loses nothing. The
        # expected stream makes a layout mismatch an error, not a message
        # stored somewhere nobody reads.
        await self.js.publish(subject, body, stream=stream, headers={"Nats-Msg-Id": mc.new_message_id()})

