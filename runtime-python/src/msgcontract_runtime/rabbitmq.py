"""RabbitMQ for Python services, on pika (``pip install msgcontract-runtime[rabbitmq]``).

docs/rabbitmq.md is the wire design, defined by runtime-go/transport/rabbitmq;
this module declares the same exchanges and queues with the same arguments
(AMQP types included), publishes the same messages and follows the same
consuming rules, so Go, Java and Python members share one group queue
``P/G/T`` and one dead-letter queue ``P.dlq``:

- every publish is confirmed (``confirm.select``) and fails at once, naming
  the alarm, while the broker blocks the connection;
- RabbitMQConsumerLoop consumes ``P/G/T`` with prefetch = its batch size,
  runs up to batch_size deliveries in one business transaction and acks them
  only after it committed; a retry copy goes under a fresh message_id through
  the power-of-two delay queues ``P.delay/G/2^k`` (or ``P.retry`` under
  16 ms), a dead letter as a JSON record to ``P.dlq``, each confirmed before
  the delivery is acked; it never nacks to retry;
- DeadLetters is the dead-letter store (list, show, replay, purge) reading
  ``P.dlq`` with basic.get as ``msgcontract dlq --rabbitmq`` does;
- RabbitMQPublisher is the producer and the outbox relay's publisher
  (``outbox.Relay(conn, RabbitMQPublisher(...))``).

pika's BlockingConnection is not thread-safe: each loop, publisher and store
has a connection of its own, used from one thread.
"""

from __future__ import annotations

import base64
import dataclasses
import heapq
import json
import logging
import os
import time
import urllib.parse
from collections.abc import Callable, Sequence
from typing import Any

import pika
import pika.compat
import pika.exceptions
from pika.adapters.blocking_connection import BlockingChannel

from msgcontract.v1 import envelope_pb2 as _envelope_pb2
from msgcontract_runtime.consumer import (
    Ack,
    Consumer,
    DeadLetter,
    Decision,
    Defer,
    Refused,
    Retry,
    Routed,
    route_envelope,
    run_routed,
)
from msgcontract_runtime.dlqrecord import dead_letter_record, rfc3339
from msgcontract_runtime.envelope import decode, encode
from msgcontract_runtime.event import DecodeError

log = logging.getLogger("msgcontract.rabbitmq")

DEFAULT_PREFIX = "msgcontract"
HEADER_TOPIC = "x-msgcontract-topic"
HEADER_NOT_BEFORE = "x-msgcontract-not-before"
HEADER_DLQ_GROUP = "x-msgcontract-group"
HEADER_CC = "CC"
HEADER_DELIVERY_COUNT = "x-delivery-count"
CONTENT_TYPE = "application/x-protobuf; messageType=msgcontract.v1.Envelope"
MIN_DELAY_EXP = 4  # 16 ms: shorter waits are held by the consumer
MAX_DELAY_EXP = 31  # 2^31 ms, 24.9 days
AHEAD_DELAY_EXP = 12  # a member declares P.delay/G/16 .. P.delay/G/4096 ahead
INFRA_RETRY_MS = 1000
BLOCKED_GIVE_UP_S = 0.25
DLQ_DEFAULT_LIMIT = 100


class RabbitMQError(Exception):
    """A broker operation failed: the message names the operation, the exchange or queue and what to do."""


class ConfigError(ValueError):
    """A Config that cannot work; the message lists every problem."""


def _check_name(what: str, s: str, forbidden: str) -> str | None:
    if s == "":
        return f"rabbitmq: {what} is empty"
    if len(s.encode("utf-8")) > 200:
        return f"rabbitmq: {what} {s[:20]!r}… is longer than 200 bytes (queue names are at most 255)"
    bad = [c for c in forbidden if c in s]
    if bad:
        return f"rabbitmq: {what} {s!r} contains one of {forbidden!r}"
    return None


def check_topic(topic: str) -> None:
    """Raises ConfigError when topic cannot name a queue (it must not contain ``*`` or ``#``)."""
    err = _check_name("topic", topic, "*#")
    if err:
        raise ConfigError(err)


def check_group(group: str) -> None:
    """Raises ConfigError when group cannot name a queue (it must not contain ``/``)."""
    err = _check_name("group", group, "/")
    if err:
        raise ConfigError(err)


def redact(url: str) -> str:
    """url with its password replaced, for messages and logs."""
    try:
        u = urllib.parse.urlsplit(url)
    except ValueError:
        return "(unparsable URL)"
    if u.password is None:
        return url
    netloc = f"{u.username}:xxxxx@{u.hostname}" + (f":{u.port}" if u.port else "")
    return urllib.parse.urlunsplit((u.scheme, netloc, u.path, u.query, u.fragment))


@dataclasses.dataclass
class Config:
    """Where and how: url (``amqp://user:password@host:5672/``), prefix P of every name, the consumer's group
    and topics; prefetch (0: the loop's batch size), lease_s (a delivery held unsettled longer is handed
    back with basic.nack requeue), publish_timeout_s (the longest wait for a publish's confirm)."""

    url: str
    prefix: str = DEFAULT_PREFIX
    group: str = ""
    topics: Sequence[str] = ()
    prefetch: int = 0
    lease_s: float = 60.0
    publish_timeout_s: float = 30.0
    connect_timeout_s: float = 30.0

    def validate(self, consumer: bool = False) -> None:
        """Raises ConfigError naming every problem (a consumer also needs a group and topics)."""
        errs: list[str] = []
        if not self.url:
            errs.append("rabbitmq: Config.url is required (amqp://user:password@host:5672/)")
        else:
            scheme = urllib.parse.urlsplit(self.url).scheme
            if scheme not in ("amqp", "amqps"):
                errs.append(f"rabbitmq: Config.url {redact(self.url)!r} is not an amqp:// or amqps:// URL")
        err = _check_name("prefix", self.prefix, "/*#")
        if err:
            errs.append(err)
        if consumer:
            err = _check_name("group", self.group, "/")
            if err:
                errs.append(err)
            if not self.topics:
                errs.append("rabbitmq: no topics to consume (give the consumers' topics)")
        for t in self.topics:
            err = _check_name("topic", t, "*#")
            if err:
                errs.append(err)
        if not 0 <= self.prefetch <= 65535:
            errs.append(f"rabbitmq: Config.prefetch {self.prefetch} is outside 0..65535 (basic.qos)")
        if self.lease_s <= 0:
            errs.append(f"rabbitmq: Config.lease_s {self.lease_s} must be positive")
        if self.publish_timeout_s <= 0:
            errs.append(f"rabbitmq: Config.publish_timeout_s {self.publish_timeout_s} must be positive")
        if errs:
            raise ConfigError("; ".join(errs))


@dataclasses.dataclass(frozen=True)
class Names:
    """The names of docs/rabbitmq.md, "Names", under prefix p."""

    p: str

    @property
    def topic_exchange(self) -> str:
        return self.p

    @property
    def retry_exchange(self) -> str:
        return self.p + ".retry"

    @property
    def delay_exchange(self) -> str:
        return self.p + ".delay"

    @property
    def unrouted(self) -> str:
        return self.p + ".unrouted"

    @property
    def dlq(self) -> str:
        return self.p + ".dlq"

    def queue(self, group: str, topic: str) -> str:
        return f"{self.p}/{group}/{topic}"

    def delay_queue(self, group: str, exp: int) -> str:
        return f"{self.p}.delay/{group}/{1 << exp}"


def bucket(wait_ms: int) -> int | None:
    """The delay queue's exponent k for a wait: min(floor(log2(wait)), 31), or None under 16 ms."""
    if wait_ms < (1 << MIN_DELAY_EXP):
        return None
    return min(wait_ms.bit_length() - 1, MAX_DELAY_EXP)


def _long(v: int) -> int:
    """v as an AMQP signed 64-bit table value (``l``): pika encodes a plain int that fits 32 bits as ``I``, and
    the delay queues' x-message-ttl must be ``l`` as runtime-go declares it (a redeclare compares arguments)."""
    long_v: int = pika.compat.long(v)
    return long_v


def quorum(**extra: Any) -> dict[str, Any]:
    args: dict[str, Any] = {"x-queue-type": "quorum"}
    args.update(extra)
    return args


def delay_queue_args(names: Names, exp: int) -> dict[str, Any]:
    """The arguments of the delay queue of 2^exp ms, exactly as docs/rabbitmq.md lists them."""
    return quorum(**{
        "x-message-ttl": _long(1 << exp),
        "x-dead-letter-exchange": names.retry_exchange,
        "x-dead-letter-strategy": "at-least-once",
        "x-overflow": "reject-publish",
    })


def new_message_id() -> str:
    """A fresh transport message_id: 32 lowercase hex digits (16 random bytes)."""
    return os.urandom(16).hex()


def new_record_id(now_us: int) -> str:
    """A dead-letter record id: ``%016x`` of the store time in microseconds, ``-``, 8 random hex digits."""
    return f"{now_us:016x}-{os.urandom(4).hex()}"


def _now_ms() -> int:
    return int(time.time() * 1000)


class Connection:
    """One AMQP connection: an admin channel for declarations, a confirm-mode channel for publishes, the
    broker's connection.blocked state, and the names declared so far. Used from one thread.

    With redial (publishers, the dlq store, a loop's publishing connection), a publish on a closed
    connection dials again first, as runtime-go's lazy reconnect does."""

    def __init__(self, cfg: Config, name: str = "msgcontract runtime-python", redial: bool = False) -> None:
        self.cfg = cfg
        self.n = Names(cfg.prefix)
        self.name = name
        self.redial = redial
        self.declared: set[str] = set()
        self._dial()

    def _dial(self) -> None:
        params = pika.URLParameters(self.cfg.url)
        params.client_properties = {"connection_name": self.name}
        # While the broker blocks the connection (a memory or disk alarm) a confirm cannot come: pika
        # closes the connection this long after connection.blocked, which ends the publish waiting for it
        # with an error naming the alarm (docs/rabbitmq.md: a publish fails at once instead of hanging).
        params.blocked_connection_timeout = min(BLOCKED_GIVE_UP_S, self.cfg.publish_timeout_s)
        params.socket_timeout = self.cfg.connect_timeout_s
        try:
            self.conn = pika.BlockingConnection(params)
        except pika.exceptions.AMQPError as e:
            raise RabbitMQError(f"rabbitmq: connect to {redact(self.cfg.url)}: {e!r}; is the broker up and the URL "
                                "right?") from e
        self.blocked: str | None = None
        self.conn.add_on_connection_blocked_callback(self._on_blocked)
        self.conn.add_on_connection_unblocked_callback(self._on_unblocked)
        self._admin: BlockingChannel | None = None
        self._pub: BlockingChannel | None = None

    def _live(self) -> None:
        """Reads what arrived (connection.blocked among it); dials again when the connection closed and
        redial is on, else raises."""
        try:
            if self.conn.is_open:
                self.conn.process_data_events(0)
        except pika.exceptions.AMQPError as e:
            log.warning("msgcontract: rabbitmq connection %s: %r", self.name, e)
        if self.conn.is_open:
            return
        if not self.redial:
            raise RabbitMQError(f"rabbitmq: the connection to {redact(self.cfg.url)} closed; restart the consumer "
                                "(the broker handed back what it held unacknowledged)")
        self._dial()

    def _on_blocked(self, _conn: Any, frame: Any) -> None:
        self.blocked = str(getattr(frame.method, "reason", "") or "unknown alarm")

    def _on_unblocked(self, _conn: Any, _frame: Any) -> None:
        self.blocked = None

    def admin(self) -> BlockingChannel:
        if self.redial and not self.conn.is_open:
            self._dial()
        if self._admin is None or not self._admin.is_open:
            self._admin = self.conn.channel()
        return self._admin

    def channel(self) -> BlockingChannel:
        return self.conn.channel()

    def declare_base(self) -> None:
        """The four exchanges and the queues P.unrouted and P.dlq (what a producer declares)."""
        n = self.n
        if n.topic_exchange in self.declared:
            return
        ch = self.admin()
        try:
            ch.exchange_declare(n.unrouted, "fanout", durable=True)
            ch.exchange_declare(n.topic_exchange, "topic", durable=True,
                                arguments={"alternate-exchange": n.unrouted})
            ch.exchange_declare(n.retry_exchange, "direct", durable=True)
            ch.exchange_declare(n.delay_exchange, "direct", durable=True)
            for q in (n.unrouted, n.dlq):
                ch.queue_declare(q, durable=True, arguments=quorum())
            ch.queue_bind(n.unrouted, n.unrouted, routing_key="")
        except pika.exceptions.AMQPError as e:
            raise RabbitMQError(f"rabbitmq: declare the exchanges and queues of prefix {n.p!r}: {e!r} (a 406 "
                                "PRECONDITION_FAILED: they exist with other arguments; see docs/rabbitmq.md)") from e
        self.declared.add(n.topic_exchange)

    def declare_group(self, group: str, topic: str) -> str:
        """group's queue of topic, bound to P (key topic) and to P.retry (key: its name)."""
        q = self.n.queue(group, topic)
        if q in self.declared:
            return q
        ch = self.admin()
        try:
            ch.queue_declare(q, durable=True, arguments=quorum())
            ch.queue_bind(q, self.n.topic_exchange, routing_key=topic)
            ch.queue_bind(q, self.n.retry_exchange, routing_key=q)
        except pika.exceptions.AMQPError as e:
            raise RabbitMQError(f"rabbitmq: declare queue {q}: {e!r}") from e
        self.declared.add(q)
        return q

    def declare_delay(self, group: str, exp: int) -> str:
        """group's delay queue of 2^exp ms, bound to P.delay with its name."""
        q = self.n.delay_queue(group, exp)
        if q in self.declared:
            return q
        ch = self.admin()
        try:
            ch.queue_declare(q, durable=True, arguments=delay_queue_args(self.n, exp))
            ch.queue_bind(q, self.n.delay_exchange, routing_key=q)
        except pika.exceptions.AMQPError as e:
            raise RabbitMQError(f"rabbitmq: declare delay queue {q}: {e!r}") from e
        self.declared.add(q)
        return q

    def declare_member(self, group: str, topics: Sequence[str]) -> None:
        """What a member of group declares: the base, its queues, its delay queues of 16 ms to 4096 ms."""
        self.declare_base()
        for t in topics:
            self.declare_group(group, t)
        for exp in range(MIN_DELAY_EXP, AHEAD_DELAY_EXP + 1):
            self.declare_delay(group, exp)

    def _blocked_error(self, exchange: str, key: str) -> RabbitMQError:
        return RabbitMQError(f"rabbitmq: publish to exchange {exchange!r} key {key!r}: the broker blocks the "
                             f"connection ({self.blocked}): a memory or disk alarm; free memory or disk on the "
                             "broker, the publish is tried again")

    def publish(self, exchange: str, key: str, body: bytes, headers: dict[str, Any] | None, message_id: str,
                content_type: str = CONTENT_TYPE) -> None:
        """Publishes and waits for the broker's confirm; raises RabbitMQError when it does not come."""
        # pika reads connection.blocked off the socket: take in what arrived before deciding.
        self._live()
        if self.blocked is not None:
            raise self._blocked_error(exchange, key)
        if self._pub is None or not self._pub.is_open:
            try:
                self._pub = self.conn.channel()
                self._pub.confirm_delivery()
            except pika.exceptions.AMQPError as e:
                raise RabbitMQError(f"rabbitmq: open a publisher-confirm channel: {e!r}") from e
        props = pika.BasicProperties(content_type=content_type, delivery_mode=2, message_id=message_id,
                                     headers=headers)
        try:
            self._pub.basic_publish(exchange, key, body, props, mandatory=False)
        except pika.exceptions.NackError as e:
            raise RabbitMQError(f"rabbitmq: publish to exchange {exchange!r} key {key!r}: the broker refused it "
                                "(basic.nack); see its log") from e
        except pika.exceptions.AMQPError as e:
            if self.blocked is not None or isinstance(e, pika.exceptions.ConnectionBlockedTimeout):
                raise self._blocked_error(exchange, key) from e
            raise RabbitMQError(f"rabbitmq: publish to exchange {exchange!r} key {key!r}: no confirm: {e!r}") from e

    def publish_topic(self, topic: str, body: bytes, not_before: int = 0) -> None:
        """An event: exchange P, key topic, fresh message_id."""
        check_topic(topic)
        self.declare_base()
        h: dict[str, Any] = {HEADER_TOPIC: topic}
        if not_before > 0:
            h[HEADER_NOT_BEFORE] = _long(not_before)
        self.publish(self.n.topic_exchange, topic, body, h, new_message_id())

    def publish_to_group(self, group: str, topic: str, body: bytes, message_id: str, not_before: int,
                         now_ms: Callable[[], int] = _now_ms) -> None:
        """body to group's queue of topic only, not to be handled before not_before (ms since the epoch, 0:
        now): through the longest delay queue not longer than the wait, or P.retry under 16 ms."""
        q = self.n.queue(group, topic)
        h: dict[str, Any] = {HEADER_TOPIC: topic}
        if not_before > 0:
            h[HEADER_NOT_BEFORE] = _long(not_before)
        while True:
            exp = bucket(not_before - now_ms()) if not_before > 0 else None
            if exp is None:
                self.publish(self.n.retry_exchange, q, body, h, message_id)
                return
            dq = self.n.delay_queue(group, exp)
            if dq not in self.declared:
                # Declaring a quorum queue takes a while: measure the wait again, as runtime-go does.
                self.declare_delay(group, exp)
                continue
            h[HEADER_CC] = [q]
            self.publish(self.n.delay_exchange, dq, body, h, message_id)
            return

    def store_record(self, rec: dict[str, Any], now_us: int | None = None) -> str:
        """Publishes the dead-letter record rec under a fresh time-ordered id to P.dlq; returns the id."""
        r = dict(rec)
        r["id"] = new_record_id(now_us if now_us is not None else time.time_ns() // 1000)
        body = json.dumps(r).encode("utf-8")
        self.publish("", self.n.dlq, body, {HEADER_DLQ_GROUP: r["group"], HEADER_TOPIC: r["topic"]}, r["id"],
                     content_type="application/json")
        return str(r["id"])

    def close(self) -> None:
        try:
            if self.conn.is_open:
                self.conn.close()
        except pika.exceptions.AMQPError as e:
            log.debug("msgcontract: rabbitmq close: %r", e)


class RabbitMQPublisher:
    """Publishes envelopes to topics (exchange P, key T) with confirms; the outbox relay's publisher.

    A topic no group's queue is bound to lands in P.unrouted: declare the consumers' queues first
    (``declare`` below, or the consumers themselves)."""

    def __init__(self, cfg: Config | str, topology: dict[str, Sequence[str]] | None = None) -> None:
        self.cfg = Config(cfg) if isinstance(cfg, str) else cfg
        self.cfg.validate()
        for t, groups in (topology or {}).items():
            check_topic(t)
            for g in groups:
                check_group(g)
        self._c = Connection(self.cfg, "msgcontract runtime-python publisher", redial=True)
        self._c.declare_base()
        for t, groups in (topology or {}).items():
            for g in groups:
                self._c.declare_group(g, t)

    @property
    def connection(self) -> Connection:
        return self._c

    def publish(self, topic: str, env: _envelope_pb2.Envelope) -> None:
        """Publishes env to topic and returns once the broker confirmed it."""
        self._c.publish_topic(topic, encode(env), env.not_before)

    def publish_raw(self, topic: str, body: bytes) -> None:
        self._c.publish_topic(topic, body)

    def close(self) -> None:
        self._c.close()


@dataclasses.dataclass
class Counts:
    processed: int = 0
    deduped: int = 0
    retried: int = 0
    dead_lettered: int = 0
    handed_back: int = 0
    deferred: int = 0


@dataclasses.dataclass
class Delivery:
    """A delivery this member holds unsettled."""

    ch: BlockingChannel
    tag: int
    queue: str
    topic: str
    body: bytes
    message_id: str
    headers: dict[str, Any]
    attempt: int
    received: float  # time.monotonic() when it arrived (its lease)

    @property
    def not_before(self) -> int:
        v = self.headers.get(HEADER_NOT_BEFORE)
        return int(v) if isinstance(v, int) else 0


def route(body: bytes, topic: str, routes: dict[tuple[str, str], Consumer[Any]],
          group: str) -> Routed[Consumer[Any]] | Refused:
    """Where a delivery goes: consumer.route_envelope (RabbitMQ carries no Confluent framing)."""
    return route_envelope(body, topic, routes, group)


class RabbitMQConsumerLoop:
    """A member of group on RabbitMQ running msgcontract Consumers, as runtime-go's consumer on
    rabbitmq.Transport, making the decisions KafkaConsumerLoop makes (consumer.py).

    consumers are the generated handlers' Consumer objects; conn is the
    business database's DB-API connection. Up to batch_size deliveries (the
    prefetch, unless cfg.prefetch says otherwise) that reach a handler share
    one transaction, each in a savepoint, and are acked after its commit;
    one alone, or batch_size 1, has a transaction of its own. A failed
    transaction hands them back through the delay queues (the same
    message_id, due in INFRA_RETRY_MS). Each message keeps one retry chain
    keyed by its message_id (msg_dedup_chain), as on Kafka.
    """

    def __init__(self, cfg: Config | str, group: str, consumers: Sequence[Consumer[Any]], conn: Any,
                 prefix: str = DEFAULT_PREFIX, batch_size: int = 64,
                 clock_ms: Callable[[], int] = _now_ms) -> None:
        if batch_size < 1:
            raise ValueError(f"rabbitmq: batch_size {batch_size} must be at least 1 (1: a transaction per message)")
        topics = sorted({c.spec.topic for c in consumers})
        base = Config(cfg, prefix=prefix) if isinstance(cfg, str) else cfg
        self.cfg = dataclasses.replace(base, group=group, topics=topics)
        self.cfg.validate(consumer=True)
        self.group = group
        self.batch_size = batch_size
        self.conn = conn
        self.clock_ms = clock_ms
        self.counts = Counts()
        self._routes = {(c.spec.topic, c.spec.event_type): c for c in consumers}
        self._c = Connection(self.cfg, f"msgcontract runtime-python {group}")
        self._c.declare_member(group, topics)
        # Retries, deferrals and dead letters go out on a connection of their own: the broker blocks a
        # publishing connection under an alarm (and pika then closes it), which must not end consuming.
        self._p = Connection(self.cfg, f"msgcontract runtime-python {group} publisher", redial=True)
        self._p.declared = self._c.declared
        self._topic_of: dict[str, str] = {}
        self._inbox: list[Delivery] = []
        self._held: list[tuple[int, int, Delivery]] = []  # (due ms, seq, delivery): unacked, due soon
        self._seq = 0
        self._closed = False
        prefetch = self.cfg.prefetch or batch_size
        self._channels: list[BlockingChannel] = []
        for t in topics:
            q = self._c.n.queue(group, t)
            self._topic_of[q] = t
            ch = self._c.channel()
            ch.basic_qos(prefetch_count=prefetch, global_qos=False)
            ch.basic_consume(q, self._on_message, auto_ack=False, consumer_tag=q)
            self._channels.append(ch)

    @property
    def connection(self) -> Connection:
        return self._c

    def _on_message(self, ch: BlockingChannel, method: Any, props: Any, body: bytes) -> None:
        q = str(method.consumer_tag)
        headers = dict(props.headers or {})
        count = headers.get(HEADER_DELIVERY_COUNT)
        self._inbox.append(Delivery(
            ch, int(method.delivery_tag), q, self._topic_of.get(q, q), bytes(body), str(props.message_id or ""),
            headers, 1 + (int(count) if isinstance(count, int) else 0), time.monotonic()))

    def run(self, stop: Callable[[], bool], poll_timeout_s: float = 0.2) -> None:
        """Consumes until stop() is true, then closes (the broker requeues whatever is unacknowledged)."""
        try:
            while not stop():
                self.step(poll_timeout_s)
        finally:
            self.close()

    def step(self, poll_timeout_s: float = 0.2) -> None:
        """One turn: the deliveries held until now, then what arrived (waiting up to poll_timeout_s)."""
        wait = poll_timeout_s
        if self._held:
            wait = max(0.0, min(wait, (self._held[0][0] - self.clock_ms()) / 1000))
        if self._inbox:
            wait = 0.0
        try:
            self._c.conn.process_data_events(time_limit=wait)
        except pika.exceptions.AMQPError as e:
            raise RabbitMQError(f"rabbitmq: group {self.group}: the consuming connection failed: {e!r}; restart the "
                                "consumer (the broker hands back what it held unacknowledged)") from e
        closed = [ch for ch in self._channels if not ch.is_open]
        if closed:
            raise RabbitMQError(f"rabbitmq: group {self.group}: the broker closed a consuming channel (see its log, "
                                "e.g. consumer_timeout); restart the consumer, the broker hands back what it held")
        now = self.clock_ms()
        todo: list[Delivery] = []
        while self._held and self._held[0][0] <= now:
            todo.append(heapq.heappop(self._held)[2])
        todo.extend(self._inbox)
        self._inbox = []
        for i in range(0, len(todo), self.batch_size):
            self._run_batch(todo[i:i + self.batch_size])
        self._expire_leases()

    def _hold(self, d: Delivery, until_ms: int) -> None:
        self._seq += 1
        heapq.heappush(self._held, (until_ms, self._seq, d))

    def _expire_leases(self) -> None:
        """A delivery held longer than the lease is handed back: basic.nack(requeue) (docs/rabbitmq.md, 4)."""
        if not self._held:
            return
        limit = time.monotonic() - self.cfg.lease_s
        keep = []
        for e in self._held:
            if e[2].received < limit:
                self._settle(e[2], ack=False)
            else:
                keep.append(e)
        if len(keep) != len(self._held):
            heapq.heapify(keep)
            self._held = keep

    def _settle(self, d: Delivery, ack: bool = True) -> None:
        try:
            if ack:
                d.ch.basic_ack(d.tag)
            else:
                d.ch.basic_nack(d.tag, requeue=True)
        except pika.exceptions.AMQPError as e:
            # The channel closed: the broker requeued it, and the claims absorb its next delivery.
            log.warning("msgcontract: rabbitmq %s of %s on %s failed; it comes again: %r",
                        "ack" if ack else "nack", d.message_id, d.queue, e)

    def _defer(self, d: Delivery, until_ms: int) -> None:
        """Hands d back until until_ms: the same body and message_id through the delay queues, then ack; under
        16 ms held here, unacknowledged. When the publish fails, d stays unacknowledged and is tried again."""
        if until_ms - self.clock_ms() < (1 << MIN_DELAY_EXP):
            self._hold(d, until_ms)
            return
        if self._publishing(self._p.publish_to_group, d, self.group, d.topic, d.body, d.message_id, until_ms,
                            self.clock_ms):
            self.counts.deferred += 1
            self._settle(d)

    def _publishing(self, fn: Callable[..., Any], d: Delivery, *args: Any) -> bool:
        try:
            fn(*args)
            return True
        except RabbitMQError as e:
            log.error("msgcontract: %s; message %s stays unacknowledged and is tried again in %d ms", e,
                      d.message_id, INFRA_RETRY_MS)
            self._hold(d, self.clock_ms() + INFRA_RETRY_MS)
            return False

    def _run_batch(self, ds: list[Delivery]) -> None:
        # Copies not due yet are sent on (one confirmed publish each) after the due ones were handled: they
        # have 16 ms or more to go, the due ones none.
        now = self.clock_ms()
        early = [d for d in ds if d.not_before > now]
        self._run_due([d for d in ds if d.not_before <= now])
        for d in early:
            self._defer(d, d.not_before)

    def _run_due(self, ds: list[Delivery]) -> None:
        todo: list[tuple[Delivery, Routed[Consumer[Any]], str]] = []
        for d in ds:
            r = route(d.body, d.topic, self._routes, self.group)
            if isinstance(r, Refused):
                self._dead_letter(d, r.topic, r.body, r.env, "", r.dead)
            else:
                todo.append((d, r, self._delivery_id(d)))
        if not todo:
            return
        res = run_routed(self.conn, todo)
        for d in res.superseded:
            self.counts.deduped += 1
            self._settle(d)
        for d in res.failed:  # handed back: the same message_id, due in INFRA_RETRY_MS
            self.counts.handed_back += 1
            self._defer(d, self.clock_ms() + INFRA_RETRY_MS)
        for d, r, dec in res.decided:
            self._decided(d, r, dec)

    @staticmethod
    def _delivery_id(d: Delivery) -> str:
        """The delivery's id for the retry chain: its message_id (one without: the queue and delivery tag)."""
        return d.message_id or f"{d.queue}#{d.tag}"

    def _decided(self, d: Delivery, r: Routed[Consumer[Any]], dec: Decision) -> None:
        if isinstance(dec, Ack):
            if dec.deduplicated:
                self.counts.deduped += 1
            else:
                self.counts.processed += 1
            self._settle(d)
        elif isinstance(dec, Defer):
            self._defer(d, dec.not_before_ms)
        elif isinstance(dec, Retry):
            nxt = dec.next_envelope
            if self._publishing(self._p.publish_to_group, d, self.group, r.topic, encode(nxt), new_message_id(),
                                nxt.not_before, self.clock_ms):
                self.counts.retried += 1
                self._settle(d)
        else:
            self._dead_letter(d, r.topic, r.body, r.env, r.target.handler_name, dec)

    def _dead_letter(self, d: Delivery, topic: str, body: bytes, env: _envelope_pb2.Envelope | None,
                     handler: str, dead: DeadLetter) -> None:
        rec = dead_letter_record(topic, self.group, handler, body, env, dead, self.clock_ms())
        if self._publishing(self._p.store_record, d, rec):
            self.counts.dead_lettered += 1
            self._settle(d)

    def close(self) -> None:
        """Closes the connection: the broker requeues whatever this member did not acknowledge. Idempotent."""
        if self._closed:
            return
        self._closed = True
        self._c.close()
        self._p.close()


class NotFound(KeyError):
    """No dead-letter record with that id."""


@dataclasses.dataclass
class Filter:
    """Which records: by topic, group, handler, reason (empty: any); limit for list (0: 100)."""

    topic: str = ""
    group: str = ""
    handler: str = ""
    reason: str = ""
    limit: int = 0

    def matches(self, r: dict[str, Any]) -> bool:
        return all(not want or r.get(k) == want for k, want in
                   (("topic", self.topic), ("group", self.group), ("handler", self.handler),
                    ("reason", self.reason)))


class DeadLetters:
    """The dead-letter store on P.dlq, as ``msgcontract dlq --rabbitmq`` and runtime-go's store: each call
    reads the whole queue with basic.get (no auto-ack) until it is empty, sorts by id, acts, acks the records
    it removes and hands back the rest (basic.nack multiple, requeue). Run one at a time.

    Records are the dlq.Record JSON objects as dicts (``envelope`` base64)."""

    def __init__(self, cfg: Config | str, prefix: str = DEFAULT_PREFIX) -> None:
        self.cfg = Config(cfg, prefix=prefix) if isinstance(cfg, str) else cfg
        self.cfg.validate()
        self._c = Connection(self.cfg, "msgcontract runtime-python dlq", redial=True)
        self._c.declare_base()

    def _scan(self, fn: Callable[[Callable[[int], None], list[tuple[dict[str, Any], int]]], Any]) -> Any:
        """Reads every record, lets fn remove (ack) some by delivery tag, and hands the rest back with one
        basic.nack(multiple) up to the highest tag kept: naming a removed one is refused (406)."""
        ch = self._c.channel()
        removed: set[int] = set()

        def remove(tag: int) -> None:
            ch.basic_ack(tag)
            removed.add(tag)

        q = self._c.n.dlq
        recs: list[tuple[dict[str, Any], int]] = []
        last = 0
        try:
            while True:
                try:
                    method, props, body = ch.basic_get(q, auto_ack=False)
                except pika.exceptions.AMQPError as e:
                    raise RabbitMQError(f"rabbitmq: dlq: read {q}: {e!r}") from e
                if method is None:
                    break
                last = int(method.delivery_tag)
                try:
                    r = json.loads(body)
                except ValueError as e:
                    raise RabbitMQError(f"rabbitmq: dlq: record {props.message_id} in {q} is not a JSON dlq.Record: "
                                        f"{e}") from e
                if not isinstance(r, dict):
                    raise RabbitMQError(f"rabbitmq: dlq: record {props.message_id} in {q} is not a JSON object")
                if not r.get("id"):
                    r["id"] = str(props.message_id or "")
                recs.append((r, last))
            recs.sort(key=lambda x: str(x[0]["id"]))
            return fn(remove, recs)
        finally:
            last = max((tag for _, tag in recs if tag not in removed), default=0)
            try:
                if last > 0 and ch.is_open:
                    ch.basic_nack(last, multiple=True, requeue=True)
                if ch.is_open:
                    ch.close()
            except pika.exceptions.AMQPError as e:  # the channel's close hands them back as well
                log.warning("msgcontract: rabbitmq dlq: hand back the records: %r", e)

    def list(self, f: Filter | None = None) -> list[dict[str, Any]]:
        """Matching records, oldest first (at most f.limit, default 100)."""
        f = f or Filter()
        limit = f.limit if f.limit > 0 else DLQ_DEFAULT_LIMIT

        def pick(_remove: Callable[[int], None], recs: list[tuple[dict[str, Any], int]]) -> list[dict[str, Any]]:
            return [r for r, _ in recs if f.matches(r)][:limit]

        out: list[dict[str, Any]] = self._scan(pick)
        return out

    def show(self, record_id: str) -> dict[str, Any]:
        def find(_remove: Callable[[int], None], recs: list[tuple[dict[str, Any], int]]) -> dict[str, Any] | None:
            return next((r for r, _ in recs if r["id"] == record_id), None)

        r: dict[str, Any] | None = self._scan(find)
        if r is None:
            raise NotFound(f"no record {record_id!r} in {self._c.n.dlq}")
        return r

    def replay(self, record_id: str, now_ms: Callable[[], int] = _now_ms) -> None:
        """Sends the record's envelope (retry_count and not_before reset, replay_count + 1) to its group's
        queue only, stores the record again with replay_count + 1 under a new id, then removes the old one."""

        def do(remove: Callable[[int], None], recs: list[tuple[dict[str, Any], int]]) -> None:
            hit = next(((r, tag) for r, tag in recs if r["id"] == record_id), None)
            if hit is None:
                raise NotFound(f"no record {record_id!r} in {self._c.n.dlq}")
            r, tag = hit
            group, topic = str(r.get("group", "")), str(r.get("topic", ""))
            check_group(group)
            try:
                env = decode(base64.b64decode(r.get("envelope") or ""))
            except (DecodeError, ValueError) as e:
                raise RabbitMQError(f"dlq replay {record_id}: the envelope does not decode, fix the producer and "
                                    f"purge it: {e}") from e
            env.retry_count = 0
            env.not_before = 0
            env.replay_count += 1
            self._c.declare_group(group, topic)
            self._c.publish_to_group(group, topic, encode(env), new_message_id(), 0)
            again = dict(r)
            again["replay_count"] = int(r.get("replay_count") or 0) + 1
            again["last_replayed_at"] = rfc3339(now_ms())
            self._c.store_record(again)
            remove(tag)

        self._scan(do)

    def purge(self, f: Filter | None = None) -> int:
        """Removes the matching records; returns how many."""
        f = f or Filter()

        def do(remove: Callable[[int], None], recs: list[tuple[dict[str, Any], int]]) -> int:
            n = 0
            for r, tag in recs:
                if f.matches(r):
                    remove(tag)
                    n += 1
            return n

        n: int = self._scan(do)
        return n

    def close(self) -> None:
        self._c.close()
