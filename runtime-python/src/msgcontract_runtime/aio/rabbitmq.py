"""RabbitMQ for the asyncio consumer (aio-pika), on docs/rabbitmq.md's wire design.

RabbitMQSubscription is the Subscription ``AsyncConsumer.run`` uses: it
consumes group G's queues ``P/G/T`` (prefetch = the consumer's concurrency
unless given) and carries out AsyncConsumer's decisions as
msgcontract_runtime.rabbitmq's sync loop does: ack after the business
commit, a retry copy under a fresh message_id through the power-of-two delay
queues (or ``P.retry`` under 16 ms), a dead letter as a JSON record in
``P.dlq``, each publish confirmed before the ack, never a nack to retry. A
delivery whose ``x-msgcontract-not-before`` is 16 ms or more ahead is sent
on through a delay queue (same body and message_id) before any handler sees
it; a shorter wait is held here. Names, arguments and the dlq record format
come from msgcontract_runtime.rabbitmq; for the dead-letter store use its
DeadLetters (``pip install msgcontract-runtime[rabbitmq]`` installs both
clients).
"""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import heapq
import json
import logging
import time
from collections.abc import Sequence
from typing import Any

import aio_pika
import pamqp.encode as _pamqp_encode
from aio_pika.abc import AbstractChannel, AbstractExchange, AbstractIncomingMessage

from msgcontract.v1 import envelope_pb2 as _envelope_pb2
from msgcontract_runtime import rabbitmq as _r
from msgcontract_runtime.aio import DeadLetterRecord, Delivery
from msgcontract_runtime.dlqrecord import rfc3339
from msgcontract_runtime.envelope import encode
from msgcontract_runtime.event import EventSpec

log = logging.getLogger("msgcontract.aio.rabbitmq")


class Long(int):
    """An int sent as an AMQP signed 64-bit table value (``l``): pamqp encodes plain ints by size (``b``, ``s``,
    ``I``…), and the delay queues' x-message-ttl must be ``l`` as runtime-go declares it."""


_table_integer = _pamqp_encode.table_integer


def _long_aware_table_integer(value: int) -> bytes:
    if isinstance(value, Long):
        return b"l" + bytes(_pamqp_encode.long_long_int(value))
    return bytes(_table_integer(value))


# pamqp's encode_table_value looks table_integer up in its module: only Long values change.
setattr(_pamqp_encode, "table_integer", _long_aware_table_integer)  # noqa: B010


def _longs(table: dict[str, Any]) -> dict[str, Any]:
    return {k: Long(v) if isinstance(v, int) and not isinstance(v, bool) else v for k, v in table.items()}


def _now_ms() -> int:
    return int(time.time() * 1000)


class AsyncConnection:
    """One aio-pika connection: a channel with publisher confirms, declarations, the names declared so far."""

    def __init__(self, cfg: _r.Config, conn: Any, pub: AbstractChannel, admin: AbstractChannel) -> None:
        self.cfg = cfg
        self.n = _r.Names(cfg.prefix)
        self.conn = conn
        self.pub = pub
        self.admin = admin
        self.declared: set[str] = set()
        self._exchanges: dict[str, AbstractExchange] = {}

    @classmethod
    async def open(cls, cfg: _r.Config, name: str = "msgcontract runtime-python asyncio") -> AsyncConnection:
        cfg.validate()
        try:
            conn = await asyncio.wait_for(
                aio_pika.connect(cfg.url, client_properties={"connection_name": name}), cfg.connect_timeout_s)
        except (OSError, asyncio.TimeoutError, aio_pika.exceptions.AMQPException) as e:
            raise _r.RabbitMQError(f"rabbitmq: connect to {_r.redact(cfg.url)}: {e!r}; is the broker up and the "
                                   "URL right?") from e
        pub = await conn.channel(publisher_confirms=True)
        admin = await conn.channel(publisher_confirms=False)
        return cls(cfg, conn, pub, admin)

    async def _admin(self) -> AbstractChannel:
        if self.admin.is_closed:
            self.admin = await self.conn.channel(publisher_confirms=False)
        return self.admin

    async def declare_base(self) -> None:
        n = self.n
        if n.topic_exchange in self.declared:
            return
        ch = await self._admin()
        try:
            unrouted = await ch.declare_exchange(n.unrouted, aio_pika.ExchangeType.FANOUT, durable=True)
            await ch.declare_exchange(n.topic_exchange, aio_pika.ExchangeType.TOPIC, durable=True,
                                      arguments={"alternate-exchange": n.unrouted})
            await ch.declare_exchange(n.retry_exchange, aio_pika.ExchangeType.DIRECT, durable=True)
            await ch.declare_exchange(n.delay_exchange, aio_pika.ExchangeType.DIRECT, durable=True)
            for q in (n.unrouted, n.dlq):
                await ch.declare_queue(q, durable=True, arguments=_r.quorum())
            uq = await ch.get_queue(n.unrouted, ensure=False)
            await uq.bind(unrouted, routing_key="")
        except aio_pika.exceptions.AMQPException as e:
            raise _r.RabbitMQError(f"rabbitmq: declare the exchanges and queues of prefix {n.p!r}: {e!r} (a 406 "
                                   "PRECONDITION_FAILED: they exist with other arguments; see docs/rabbitmq.md)") from e
        self.declared.add(n.topic_exchange)

    async def declare_group(self, group: str, topic: str) -> str:
        q = self.n.queue(group, topic)
        if q in self.declared:
            return q
        ch = await self._admin()
        try:
            queue = await ch.declare_queue(q, durable=True, arguments=_r.quorum())
            await queue.bind(self.n.topic_exchange, routing_key=topic)
            await queue.bind(self.n.retry_exchange, routing_key=q)
        except aio_pika.exceptions.AMQPException as e:
            raise _r.RabbitMQError(f"rabbitmq: declare queue {q}: {e!r}") from e
        self.declared.add(q)
        return q

    async def declare_delay(self, group: str, exp: int) -> str:
        q = self.n.delay_queue(group, exp)
        if q in self.declared:
            return q
        ch = await self._admin()
        try:
            queue = await ch.declare_queue(q, durable=True, arguments=_longs(_r.delay_queue_args(self.n, exp)))
            await queue.bind(self.n.delay_exchange, routing_key=q)
        except aio_pika.exceptions.AMQPException as e:
            raise _r.RabbitMQError(f"rabbitmq: declare delay queue {q}: {e!r}") from e
        self.declared.add(q)
        return q

    async def declare_member(self, group: str, topics: Sequence[str]) -> None:
        await self.declare_base()
        for t in topics:
            await self.declare_group(group, t)
        for exp in range(_r.MIN_DELAY_EXP, _r.AHEAD_DELAY_EXP + 1):
            await self.declare_delay(group, exp)

    def _blocked(self) -> bool:
        # aiormq keeps connection.blocked in a private event (and makes a publish wait on it): read it so a
        # publish fails at once instead of waiting for the alarm to clear.
        inner = getattr(self.conn, "transport", None)
        amqp = getattr(inner, "connection", None)
        ev = getattr(amqp, "_Connection__connection_unblocked", None)
        return isinstance(ev, asyncio.Event) and bool(getattr(amqp, "is_opened", False)) and not ev.is_set()

    async def _exchange(self, name: str) -> AbstractExchange:
        if self.pub.is_closed:
            self.pub = await self.conn.channel(publisher_confirms=True)
            self._exchanges.clear()
        x = self._exchanges.get(name)
        if x is None:
            x = self.pub.default_exchange if name == "" else await self.pub.get_exchange(name, ensure=False)
            self._exchanges[name] = x
        return x

    async def publish(self, exchange: str, key: str, body: bytes, headers: dict[str, Any] | None, message_id: str,
                      content_type: str = _r.CONTENT_TYPE) -> None:
        """Publishes and waits for the broker's confirm (at most publish_timeout_s)."""
        where = f"exchange {exchange!r} key {key!r}"
        if self._blocked():
            raise _r.RabbitMQError(f"rabbitmq: publish to {where}: the broker blocks the connection (a memory or "
                                   "disk alarm); free memory or disk on the broker, the publish is tried again")
        msg = aio_pika.Message(body, headers=_longs(headers or {}), content_type=content_type,
                               delivery_mode=aio_pika.DeliveryMode.PERSISTENT, message_id=message_id)
        try:
            x = await self._exchange(exchange)
            await asyncio.wait_for(x.publish(msg, key, mandatory=False), self.cfg.publish_timeout_s)
        except asyncio.TimeoutError as e:
            raise _r.RabbitMQError(f"rabbitmq: publish to {where}: no confirm within {self.cfg.publish_timeout_s}s"
                                   ) from e
        except aio_pika.exceptions.DeliveryError as e:
            raise _r.RabbitMQError(f"rabbitmq: publish to {where}: the broker refused it (basic.nack); see its "
                                   "log") from e
        except aio_pika.exceptions.AMQPException as e:
            raise _r.RabbitMQError(f"rabbitmq: publish to {where}: no confirm: {e!r}") from e

    async def publish_topic(self, topic: str, body: bytes, not_before: int = 0) -> None:
        _r.check_topic(topic)
        await self.declare_base()
        h: dict[str, Any] = {_r.HEADER_TOPIC: topic}
        if not_before > 0:
            h[_r.HEADER_NOT_BEFORE] = not_before
        await self.publish(self.n.topic_exchange, topic, body, h, _r.new_message_id())

    async def publish_to_group(self, group: str, topic: str, body: bytes, message_id: str, not_before: int) -> None:
        """As rabbitmq.Connection.publish_to_group: a delay queue, or P.retry under 16 ms."""
        q = self.n.queue(group, topic)
        h: dict[str, Any] = {_r.HEADER_TOPIC: topic}
        if not_before > 0:
            h[_r.HEADER_NOT_BEFORE] = not_before
        while True:
            exp = _r.bucket(not_before - _now_ms()) if not_before > 0 else None
            if exp is None:
                await self.publish(self.n.retry_exchange, q, body, h, message_id)
                return
            dq = self.n.delay_queue(group, exp)
            if dq not in self.declared:
                await self.declare_delay(group, exp)
                continue
            h[_r.HEADER_CC] = [q]
            await self.publish(self.n.delay_exchange, dq, body, h, message_id)
            return

    async def store_record(self, rec: dict[str, Any]) -> str:
        r = dict(rec)
        r["id"] = _r.new_record_id(time.time_ns() // 1000)
        await self.publish("", self.n.dlq, json.dumps(r).encode("utf-8"),
                           {_r.HEADER_DLQ_GROUP: r["group"], _r.HEADER_TOPIC: r["topic"]}, r["id"],
                           content_type="application/json")
        return str(r["id"])

    async def close(self) -> None:
        await self.conn.close()


async def publish(conn: AsyncConnection, topic: str, env: _envelope_pb2.Envelope) -> None:
    """Publishes env to topic (exchange P, key T, fresh message_id) and waits for the confirm."""
    await conn.publish_topic(topic, encode(env), env.not_before)


class RabbitMQSubscription:
    """Group G's queues of its consumers' topics; the Subscription AsyncConsumer.run uses."""

    def __init__(self, conn: AsyncConnection, group: str, topics: Sequence[str], prefetch: int) -> None:
        self.c = conn
        self.group = group
        self.topics = list(topics)
        self.prefetch = prefetch
        self._inbox: asyncio.Queue[AbstractIncomingMessage] = asyncio.Queue()
        self._held: list[tuple[int, int, Delivery]] = []
        self._seq = 0
        self._topic_of = {conn.n.queue(group, t): t for t in topics}
        self._channels: list[AbstractChannel] = []

    @classmethod
    async def open(cls, cfg: _r.Config | str, group: str, specs: Sequence[EventSpec[Any]],
                   prefix: str = _r.DEFAULT_PREFIX, prefetch: int = 64) -> RabbitMQSubscription:
        """Connects, declares what a member of group declares and consumes its queues (basic.qos prefetch:
        cfg.prefetch, else prefetch; give AsyncConsumer's concurrency)."""
        topics = sorted({s.topic for s in specs})
        base = _r.Config(cfg, prefix=prefix) if isinstance(cfg, str) else cfg
        c = dataclasses.replace(base, group=group, topics=topics)
        c.validate(consumer=True)
        conn = await AsyncConnection.open(c, f"msgcontract runtime-python asyncio {group}")
        try:
            await conn.declare_member(group, topics)
            sub = cls(conn, group, topics, c.prefetch or prefetch)
            for q in sub._topic_of:
                ch = await conn.conn.channel(publisher_confirms=False)
                await ch.set_qos(prefetch_count=sub.prefetch)
                queue = await ch.get_queue(q, ensure=False)
                await queue.consume(sub._inbox.put, no_ack=False, consumer_tag=q)
                sub._channels.append(ch)
        except BaseException:
            await conn.close()
            raise
        return sub

    async def close(self) -> None:
        """Closes the connection: the broker requeues whatever is unacknowledged."""
        await self.c.close()

    def _delivery(self, m: AbstractIncomingMessage) -> Delivery:
        q = str(m.consumer_tag or m.routing_key or "")
        headers = dict(m.headers or {})
        count = headers.get(_r.HEADER_DELIVERY_COUNT)
        return Delivery(self._topic_of.get(q, q), bytes(m.body), 1 + (int(count) if isinstance(count, int) else 0),
                        m, str(m.message_id or "") or None)

    async def fetch(self, max_count: int, wait_s: float) -> Sequence[Delivery]:
        """Up to max_count due deliveries; a copy not due for 16 ms or more goes on through a delay queue first."""
        out: list[Delivery] = []
        end = time.monotonic() + wait_s
        while len(out) < max_count:
            now = _now_ms()
            while self._held and self._held[0][0] <= now and len(out) < max_count:
                out.append(heapq.heappop(self._held)[2])
            if len(out) >= max_count:
                break
            left = end - time.monotonic()
            if self._held:
                left = min(left, (self._held[0][0] - now) / 1000)
            try:
                m = self._inbox.get_nowait() if out or left <= 0 else await asyncio.wait_for(self._inbox.get(), left)
            except (asyncio.QueueEmpty, asyncio.TimeoutError):
                if out or time.monotonic() >= end:
                    break
                continue
            d = self._delivery(m)
            nb = m.headers.get(_r.HEADER_NOT_BEFORE) if m.headers else None
            if isinstance(nb, int) and nb > _now_ms():
                await self._defer(d, nb)
                continue
            out.append(d)
        return out

    async def _defer(self, d: Delivery, until_ms: int) -> None:
        if until_ms - _now_ms() < (1 << _r.MIN_DELAY_EXP):
            self._seq += 1
            heapq.heappush(self._held, (until_ms, self._seq, d))
            return
        try:
            await self.c.publish_to_group(self.group, d.topic, d.body, d.delivery_id or _r.new_message_id(),
                                          until_ms)
        except _r.RabbitMQError as e:
            log.error("msgcontract: %s; the delivery stays unacknowledged and is tried again in %d ms", e,
                      _r.INFRA_RETRY_MS)
            self._seq += 1
            heapq.heappush(self._held, (_now_ms() + _r.INFRA_RETRY_MS, self._seq, d))
            return
        await self.ack(d)

    async def ack(self, d: Delivery) -> None:
        m: AbstractIncomingMessage = d.handle
        try:
            await m.ack()
        except aio_pika.exceptions.AMQPException as e:
            log.warning("msgcontract: rabbitmq ack of %s failed; it comes again: %r", d.delivery_id, e)

    async def defer(self, d: Delivery, not_before_ms: int) -> None:
        await self._defer(d, not_before_ms)

    async def release(self, d: Delivery) -> None:
        m: AbstractIncomingMessage = d.handle
        try:
            await m.nack(requeue=True)
        except aio_pika.exceptions.AMQPException as e:
            log.warning("msgcontract: rabbitmq nack of %s failed; it comes again: %r", d.delivery_id, e)

    def _leased(self, d: Delivery, e: _r.RabbitMQError) -> None:
        """A retry or dead letter whose publish failed leaves d unacknowledged; after the lease it is handed
        back (basic.nack requeue, docs/rabbitmq.md, Consuming 4) and comes again."""
        log.error("msgcontract: %s; the delivery stays unacknowledged and is handed back in %.0fs", e,
                  self.c.cfg.lease_s)
        loop = asyncio.get_running_loop()
        loop.call_later(self.c.cfg.lease_s, lambda: loop.create_task(self.release(d)))

    async def retry(self, d: Delivery, env: _envelope_pb2.Envelope) -> None:
        # Publish, then ack: a crash between redelivers d, whose next failure AsyncConsumer's retry chain
        # stops from publishing a second copy.
        try:
            await self.c.publish_to_group(self.group, env.topic or d.topic, encode(env), _r.new_message_id(),
                                          env.not_before)
        except _r.RabbitMQError as e:
            self._leased(d, e)
            raise
        await self.ack(d)

    async def dead_letter(self, d: Delivery, r: DeadLetterRecord) -> None:
        rec: dict[str, Any] = {
            "topic": r.topic, "group": self.group, "handler": r.handler, "event_type": r.event_type,
            "biz_key": r.biz_key, "message_id": r.message_id,
            "envelope": base64.b64encode(r.envelope).decode("ascii"), "reason": r.reason, "code": r.code,
            "error": r.error, "attempts": r.attempts, "first_failed_at": rfc3339(r.first_failed_at),
            "last_failed_at": rfc3339(r.last_failed_at), "dead_at": rfc3339(r.dead_at), "replay_count": 0,
        }
        try:
            await self.c.store_record(rec)
        except _r.RabbitMQError as e:
            self._leased(d, e)
            raise
        await self.ack(d)


__all__ = ["AsyncConnection", "Long", "RabbitMQSubscription", "publish"]
