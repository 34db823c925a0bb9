"""Kafka for Python services, on confluent-kafka (``pip install msgcontract-runtime[kafka]``).

Laid out exactly as runtime-go/transport/kafka, so Go and Python members can
share one consumer group and its topics (all under ``namespace``):

- ``T``: events; record key = biz_key, value = the binary envelope, or with a
  registry the Confluent-framed payload and the envelope without payload in
  the ``msgcontract.envelope`` header (msgcontract_runtime.wire);
- ``T.retry.<group>``: retry copies (value: the binary envelope; header
  ``msgcontract.topic`` = T), delivered again at their ``not_before``;
- ``T.dlq``: dead letters (value: the delivered envelope; header
  ``msgcontract.dlq`` = the dlq.Record metadata as JSON, ``msgcontract.topic``).

KafkaConsumerLoop commits a partition's offset only up to its first record whose
outcome is not durable yet (handled and committed in the business database,
deduplicated, retry copy or dead letter acknowledged by the broker), so a
crash loses nothing and the dedup claims absorb what comes again. A record
not due yet waits in memory (its key with it) without stalling other keys.
Producers are idempotent with acks=all and partition by murmur2 of the key
(``murmur2_random``), as the Java client and runtime-go do; the group uses
the cooperative-sticky assignor, runtime-go's (franz-go's) default.

With ``lag=`` (for example ``observe.PrometheusMetrics``) the loop reports
``msgcontract_consumer_lag_messages{group,topic,partition}`` as runtime-go
does: after each poll, for every partition it returned records of, the
partition's high watermark (cached from the fetch, no request) minus the
offset after its last record; a partition let go is forgotten.
"""

from __future__ import annotations

import collections
import dataclasses
import datetime
import heapq
import json
import logging
import re
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterable, Sequence
from typing import (
    Any,
    Protocol,
    TypeVar,
    cast,
)

from confluent_kafka import Consumer as _KConsumer, KafkaError, KafkaException, Message, Producer, TopicPartition
from confluent_kafka.admin import AdminClient
from confluent_kafka.cimpl import NewTopic
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.protobuf import ProtobufSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

from msgcontract.v1 import envelope_pb2 as _envelope_pb2
from msgcontract_runtime import wire
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
from msgcontract_runtime.envelope import encode
from msgcontract_runtime.event import EventSpec

log = logging.getLogger("msgcontract.kafka")

HEADER_TOPIC = "msgcontract.topic"
HEADER_DLQ = "msgcontract.dlq"
CODE_SCHEMA = -5
DLQ_RETENTION_MS = 30 * 24 * 3600 * 1000
INFRA_RETRY_MS = 1000


def sanitize(s: str) -> str:
    """Maps s to a legal topic-name fragment, as runtime-go does."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", s)


def retry_topic(namespace: str, topic: str, group: str) -> str:
    return f"{namespace}{topic}.retry.{sanitize(group)}"


def dlq_topic(namespace: str, topic: str) -> str:
    return f"{namespace}{topic}.dlq"


def record_id(topic: str, partition: int, offset: int) -> str:
    """A record's place, "<topic>/<partition>/<offset>" with the topic as the broker names it (namespace,
    retry topic): runtime-go's recordID, the delivery id of the record's retry chain step, so a Go and a
    Python member name one record alike."""
    return f"{topic}/{partition}/{offset}"


def _tp(m: Message) -> tuple[str, int]:
    """A fetched record's topic and partition. confluent-kafka types both optional (an error event may have
    neither); the records read here are fetched ones, which have them."""
    return cast(str, m.topic()), cast(int, m.partition())


def _offset(m: Message) -> int:
    """A fetched record's offset (typed optional by confluent-kafka, as _tp's topic and partition)."""
    return cast(int, m.offset())


def _headers(m: Message) -> dict[str, bytes]:
    """m's headers by name, as route reads them (a consumed record's values are bytes; confluent-kafka's types
    also allow the str a producer may pass)."""
    return cast(dict[str, bytes], dict(m.headers() or []))


def delivery_id(m: Message) -> str:
    """m's record_id."""
    return record_id(*_tp(m), _offset(m))


def _now_ms() -> int:
    return int(time.time() * 1000)


def _rfc3339(ms: int) -> str:
    t = datetime.datetime.fromtimestamp(ms / 1000, tz=datetime.timezone.utc)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def _copy(env: _envelope_pb2.Envelope) -> _envelope_pb2.Envelope:
    out = _envelope_pb2.Envelope()
    out.CopyFrom(env)
    return out


class SchemaRefused(Exception):
    """The registry refused the record's schema id, or it is not the event's subject's."""


class RegistryUnavailable(Exception):
    """The registry could not be asked; the record waits and is tried again."""


class SchemaRegistry:
    """The registry look-ups a consumer needs, cached for the process (ids are immutable), as runtime-go/confluent."""

    def __init__(self, url: str, timeout_s: float = 10.0) -> None:
        self.url = url.rstrip("/")
        self.timeout_s = timeout_s
        self._versions: dict[int, list[tuple[str, int]]] = {}
        self._no_version_logged = False

    def versions(self, schema_id: int) -> list[tuple[str, int]]:
        """The (subject, version) pairs holding schema_id (version 0: the answer names none)."""
        if schema_id in self._versions:
            return self._versions[schema_id]
        req = urllib.request.Request(
            f"{self.url}/schemas/ids/{schema_id}/versions",
            headers={"Accept": "application/vnd.schemaregistry.v1+json"},
        )
        try:
            with urllib.request.urlopen(req, timeout=self.timeout_s) as resp:
                body = json.loads(resp.read())
        except urllib.error.HTTPError as e:
            if 400 <= e.code < 500:
                body = e.read().decode(errors="replace")
                raise SchemaRefused(f"schema registry refused: HTTP {e.code}: {body}") from e
            raise RegistryUnavailable(f"schema registry: HTTP {e.code}") from e
        except (urllib.error.URLError, OSError) as e:
            raise RegistryUnavailable(f"schema registry: {e}") from e
        out = [(v["subject"], int(v.get("version") or 0)) for v in body]
        self._versions[schema_id] = out
        return out

    def subjects(self, schema_id: int) -> list[str]:
        subs: list[str] = []
        for s, _ in self.versions(schema_id):
            if s not in subs:
                subs.append(s)
        return subs

    def check_subject(self, schema_id: int, subject: str) -> int:
        """subject's version holding schema_id (0 if the answer names none); SchemaRefused if none holds it."""
        held = [v for s, v in self.versions(schema_id) if s == subject]
        if not held:
            raise SchemaRefused(f"schema id {schema_id} belongs to {self.subjects(schema_id)}, "
                                f"not to the event's subject {subject}")
        # An id is held by one version of a subject unless it was registered again after a
        # deletion; any of them is the same schema, and the newest is taken (as in Go).
        version = max(held)
        if version == 0 and not self._no_version_logged:
            self._no_version_logged = True
            log.warning("msgcontract: the schema registry names no version for schema id %d of %s; envelopes "
                        "that name none keep schema_version 0", schema_id, subject)
        return version


def subject_of(env: _envelope_pb2.Envelope, topic: str) -> str:
    """The event's subject: the envelope's schema_subject, else TopicNameStrategy on the user's topic, as in Go."""
    return env.schema_subject or f"{topic}-value"


def _producer_config(brokers: str, extra: dict[str, Any] | None) -> dict[str, Any]:
    conf: dict[str, Any] = {
        "bootstrap.servers": brokers,
        "enable.idempotence": True,
        "acks": "all",
        "partitioner": "murmur2_random",
        "linger.ms": 1,
    }
    conf.update(extra or {})
    return conf


def ensure_topics(brokers: str, names: Iterable[str], partitions: int = 6,
                  configs: dict[str, dict[str, str]] | None = None, timeout_s: float = 10.0,
                  extra: dict[str, Any] | None = None) -> None:
    """Creates the missing topics of names; an existing topic is left as it is."""
    conf: dict[str, Any] = {"bootstrap.servers": brokers}
    conf.update(extra or {})
    admin = AdminClient(conf)
    try:
        md = admin.list_topics(timeout=timeout_s)
    except KafkaException as e:
        raise RuntimeError(f"kafka: broker {brokers} unreachable after {timeout_s}s: {e}") from e
    missing = [n for n in dict.fromkeys(names) if n not in md.topics]
    if not missing:
        return
    futs = admin.create_topics(
        [NewTopic(n, num_partitions=partitions, config=(configs or {}).get(n, {})) for n in missing],
        operation_timeout=timeout_s,
    )
    for name, f in futs.items():
        try:
            f.result(timeout=timeout_s)
        except KafkaException as e:
            if e.args[0].code() != KafkaError.TOPIC_ALREADY_EXISTS:
                raise RuntimeError(f"kafka: create topic {name}: {e}") from e


def consumer_config(brokers: str, group_id: str, session_timeout_ms: int,
                    extra: dict[str, Any] | None) -> dict[str, Any]:
    """A group member's configuration: manual commits, earliest, runtime-go's cooperative-sticky assignor."""
    conf: dict[str, Any] = {
        "bootstrap.servers": brokers,
        "group.id": group_id,
        "enable.auto.commit": False,
        "enable.auto.offset.store": False,
        "auto.offset.reset": "earliest",
        "partition.assignment.strategy": "cooperative-sticky",
        "session.timeout.ms": session_timeout_ms,
        "heartbeat.interval.ms": max(session_timeout_ms // 10, 100),
    }
    conf.update(extra or {})
    return conf


def origins(namespace: str, group: str, topics: Iterable[str]) -> dict[str, str]:
    """The Kafka topics a group reads (each topic and its retry topic) mapped to the user's topic."""
    out: dict[str, str] = {}
    for t in topics:
        out[namespace + t] = t
        out[retry_topic(namespace, t, group)] = t
    return out


def ensure_group_topics(brokers: str, namespace: str, topics: Sequence[str], names: Sequence[str], partitions: int,
                        extra: dict[str, Any] | None, timeout_s: float = 10.0) -> None:
    """Creates a group's topics (names) and its topics' dead-letter topics, kept DLQ_RETENTION_MS; waits up to
    timeout_s for the cluster to answer."""
    ensure_topics(brokers, list(names) + [dlq_topic(namespace, t) for t in topics], partitions,
                  configs={dlq_topic(namespace, t): {"retention.ms": str(DLQ_RETENTION_MS)} for t in topics},
                  timeout_s=timeout_s, extra=extra)


def dlq_meta(topic: str, group: str, handler: str, event_type: str, biz_key: str, message_id: str, reason: str,
             code: int, error: str, attempts: int, first_failed_ms: int, now_ms: int) -> dict[str, Any]:
    """The ``msgcontract.dlq`` header's dlq.Record metadata, as runtime-go writes it."""
    return {
        "topic": topic, "group": group, "handler": handler, "event_type": event_type, "biz_key": biz_key,
        "message_id": message_id, "reason": reason, "code": code, "error": error, "attempts": attempts,
        "first_failed_at": _rfc3339(first_failed_ms), "last_failed_at": _rfc3339(now_ms), "dead_at": _rfc3339(now_ms),
        "replay_count": 0,
    }


def dlq_headers(meta: dict[str, Any]) -> list[tuple[str, bytes]]:
    """The headers of a dead letter with metadata meta."""
    return [(HEADER_DLQ, json.dumps(meta).encode("utf-8")), (HEADER_TOPIC, meta["topic"].encode("utf-8"))]


def unframe(registry: SchemaRegistry | None, topic: str, value: bytes, head: bytes | None) -> _envelope_pb2.Envelope:
    """The envelope of a Confluent-framed record, its schema id checked against the event's subject.

    An envelope that names no subject or no version is given the subject and the version the id is
    registered as (the check's answer), so handlers and dead letters name the schema the payload was
    written with; a version the producer named is kept."""
    if registry is None:
        raise SchemaRefused("a Confluent-framed record, and no registry_url is set")
    try:
        schema_id, _, payload = wire.unframe(value)
    except wire.FrameError as e:
        raise SchemaRefused(str(e)) from e
    if head is None:
        raise SchemaRefused(f"no {wire.HEADER_ENVELOPE} header: the biz_key and event type are the producer's to set")
    env = wire.join(head, payload)
    subject = subject_of(env, topic)
    version = registry.check_subject(schema_id, subject)
    if not env.schema_subject:
        env.schema_subject = subject
    if env.schema_version == 0:
        env.schema_version = version
    return env


T = TypeVar("T")


def route(value: bytes, headers: dict[str, bytes], topic: str, routes: dict[tuple[str, str], T], group: str,
          registry: SchemaRegistry | None) -> Routed[T] | Refused:
    """Where a record goes: topic is its user topic (the ``msgcontract.topic`` header wins), routes are by
    (topic, event type). Raises RegistryUnavailable: the record waits and is tried again."""
    if HEADER_TOPIC in headers:
        topic = headers[HEADER_TOPIC].decode("utf-8")
    body = value
    if wire.is_framed(value):
        try:
            body = encode(unframe(registry, topic, value, headers.get(wire.HEADER_ENVELOPE)))
        except SchemaRefused as e:
            return Refused(topic, value, None, DeadLetter("schema", CODE_SCHEMA, str(e), 0))
    return route_envelope(body, topic, routes, group)


def take_in(parts: dict[tuple[str, int], Offsets], m: Message) -> tuple[Offsets, bytes] | None:
    """Counts m as seen in its partition's offsets; returns them and m's ordering key (its record key).

    None for a fetch error (logged; librdkafka retries) or a partition no longer held.
    """
    if m.error() is not None:
        log.warning("msgcontract: kafka fetch failed; retrying: %s", m.error())
        return None
    ps = parts.get(_tp(m))
    if ps is None:
        return None  # not ours any more
    ps.pending.add(_offset(m))
    ps.next = max(ps.next, _offset(m) + 1)
    return ps, m.key() or ("\x00" + delivery_id(m)).encode()


def report_lag(c: _KConsumer, group: str, held: dict[tuple[str, int], Offsets], lag: LagObserver,
               msgs: list[Message]) -> None:
    """Reports, for each held partition msgs came from, its cached high watermark minus the offset after the last
    record fetched; on the consumer's thread, right after the fetch."""
    last: dict[tuple[str, int], int] = {}
    for m in msgs:
        if m.error() is None:
            k = _tp(m)
            last[k] = max(last.get(k, -1), _offset(m))
    for (topic, part), off in last.items():
        if (topic, part) not in held:
            continue
        try:
            _, high = c.get_watermark_offsets(TopicPartition(topic, part), cached=True)
        except KafkaException:
            continue  # not known yet
        if high is not None and high >= 0:
            lag.lag(group, topic, part, max(high - off - 1, 0))


class _SyncProducer:
    """A producer whose produce waits for the broker's acknowledgement."""

    def __init__(self, conf: dict[str, Any], timeout_s: float) -> None:
        self._p = Producer(conf)
        self.timeout_s = timeout_s

    def produce(self, topic: str, key: bytes, value: bytes, headers: Sequence[tuple[str, bytes]]) -> None:
        errs: list[Any] = []
        delivered: list[bool] = []

        def done(err: Any, _msg: Any) -> None:
            delivered.append(True)
            if err is not None:
                errs.append(err)

        self._p.produce(topic, key=key, value=value, headers=list(headers), on_delivery=done)
        deadline = time.monotonic() + self.timeout_s
        while not delivered:
            if time.monotonic() > deadline:
                raise RuntimeError(f"kafka: publish to {topic}: no acknowledgement within {self.timeout_s}s")
            self._p.poll(0.05)
        if errs:
            raise RuntimeError(f"kafka: publish to {topic}: {errs[0]}")

    def close(self) -> None:
        self._p.flush(self.timeout_s)


class KafkaPublisher:
    """Publishes envelopes as runtime-go's kafka.Transport does: key = biz_key, acks=all.

    With registry_url, event records are framed by confluent-kafka's own
    ProtobufSerializer (the subject's latest version, never auto-registered:
    contracts are registered with ``msgcontract registry``), and the rest of
    the envelope goes into the ``msgcontract.envelope`` header. specs gives
    the payload classes to frame with, by (topic, event type).
    """

    def __init__(self, brokers: str, namespace: str = "", registry_url: str | None = None,
                 specs: Sequence[EventSpec[Any]] = (), config: dict[str, Any] | None = None,
                 partitions: int = 6, create_topics: bool = True, timeout_s: float = 30.0) -> None:
        self.brokers = brokers
        self.namespace = namespace
        self.partitions = partitions
        self.create_topics = create_topics
        self._extra = config
        self._p = _SyncProducer(_producer_config(brokers, config), timeout_s)
        self._specs = {(s.topic, s.event_type): s for s in specs}
        self._sr = SchemaRegistryClient({"url": registry_url}) if registry_url else None
        self._serializers: dict[tuple[type, str], ProtobufSerializer] = {}
        self._known: set[str] = set()

    def _ensure(self, name: str) -> None:
        if name not in self._known:
            if self.create_topics:
                ensure_topics(self.brokers, [name], self.partitions, extra=self._extra)
            self._known.add(name)

    def record(self, topic: str, env: _envelope_pb2.Envelope) -> tuple[bytes, list[tuple[str, bytes]]]:
        """The value and headers of env's record on topic (framed when a registry is set)."""
        if self._sr is None:
            return encode(env), []
        spec = self._specs.get((topic, env.event_type))
        if spec is None:
            raise ValueError(f"kafka: no spec for event {env.event_type} on topic {topic}: pass it in specs")
        if env.content_type not in ("", "application/protobuf"):
            raise ValueError(
                f"kafka: the Confluent wire format needs a binary protobuf payload, not {env.content_type}")
        kafka_topic = self.namespace + topic
        subject = subject_of(env, topic)
        if not env.schema_subject:  # the header names it, so consumers check the id against it
            env = _copy(env)
            env.schema_subject = subject
        k = (spec.message_type, subject)
        ser = self._serializers.get(k)
        if ser is None:
            ser = ProtobufSerializer(spec.message_type, self._sr, {
                "auto.register.schemas": False, "use.latest.version": True, "use.deprecated.format": False,
                "subject.name.strategy": lambda _ctx, _name: subject,
            })
            self._serializers[k] = ser
        try:
            value = ser(spec.parse_binary(env.payload), SerializationContext(kafka_topic, MessageField.VALUE))
        except TypeError as e:
            # confluent-kafka builds the latest version's schema from its
            # references alone; the registry resolves msgcontract's options
            # without one, so a contract registered by a bare POST breaks here.
            if "has not been loaded" not in str(e):
                raise
            raise ValueError(
                f"kafka: the latest version of subject {subject} imports a file it has no reference for ({e}); "
                "register the contract with `msgcontract registry push`, which registers "
                "msgcontract/v1/options.proto and references it") from e
        if value is None:  # the serializer's answer to a None message, which parse_binary never returns
            raise ValueError(f"the schema registry serializer wrote no value for {env.event_type}")
        head, _ = wire.split(env)
        return bytes(value), [(wire.HEADER_ENVELOPE, head)]

    def publish(self, topic: str, env: _envelope_pb2.Envelope) -> None:
        """Publishes env to topic and waits for the broker's acknowledgement."""
        name = self.namespace + topic
        self._ensure(name)
        value, headers = self.record(topic, env)
        self._p.produce(name, env.biz_key.encode("utf-8"), value, headers)

    def close(self) -> None:
        self._p.close()


class LagObserver(Protocol):
    """Sees consumer lag; ``observe.PrometheusMetrics`` implements it as msgcontract_consumer_lag_messages."""

    def lag(self, group: str, topic: str, partition: int, records: int) -> None:
        """records: the partition's high watermark minus the offset after the last record fetched (>= 0);
        group as the service names it, topic the broker's name (namespace and retry topics included)."""

    def forget(self, group: str, topic: str, partition: int) -> None:
        """The member let the partition go; its next owner reports it."""


@dataclasses.dataclass
class Offsets:
    """One partition's offsets: its commit point is the first record seen whose outcome is not durable yet."""

    pending: set[int] = dataclasses.field(default_factory=set)  # offsets seen, not settled
    next: int = -1  # offset after the last record seen
    committed: int = -1

    def commit_point(self) -> int:
        return min(self.pending) if self.pending else self.next


@dataclasses.dataclass
class Counts:
    processed: int = 0
    deduped: int = 0
    retried: int = 0
    dead_lettered: int = 0
    handed_back: int = 0


class KafkaConsumerLoop:
    """A consumer-group member running msgcontract Consumers, as runtime-go's consumer on kafka.Transport.

    consumers are the generated handlers' Consumer objects (one per event
    type and topic); conn is the business database's DB-API connection
    (sqlite3, or psycopg with the consumers' paramstyle "format"). The heads
    of up to batch_size keys (64, runtime-go's FetchSize) that reach a
    handler share one transaction on it, each in a savepoint, with one
    commit; one alone, or batch_size 1 (Go's PerMessageTx, for handlers that
    must be alone in their transaction), has a transaction of its own. A
    failed transaction hands all its records back. The constructor waits up
    to connect_timeout_s for the cluster (a broker restarting), as Go's
    Config.ConnectTimeout and Java's KafkaConfig.connectTimeoutMs do.

    Each message keeps one retry chain (docs/DESIGN.md, "One retry chain per
    message"; the table is msg_dedup_chain, which ``migrate`` creates): a
    record is named by record_id; a retry copy or replay that another copy
    of its message already went on past is settled as deduplicated before
    its handler runs (a batch's chains read at once, before the transaction: run_routed); a
    failure advances the chain before its retry copy or dead letter is
    published (after the transaction ended), and a copy the chain refuses is
    settled as deduplicated too. So a member that dies between the publish
    and its offset commit does not fork the chain when the next owner fails
    the record again.
    """

    def __init__(self, brokers: str, group: str, consumers: Sequence[Consumer[Any]], conn: Any,
                 namespace: str = "", registry_url: str | None = None, config: dict[str, Any] | None = None,
                 partitions: int = 6, commit_interval_s: float = 0.2, session_timeout_ms: int = 10000,
                 clock_ms: Callable[[], int] = _now_ms, create_topics: bool = True,
                 lag: LagObserver | None = None, batch_size: int = 64, connect_timeout_s: float = 10.0) -> None:
        if batch_size < 1:
            raise ValueError(f"kafka: batch_size {batch_size} must be at least 1 (1: a transaction per record)")
        self.batch_size = batch_size
        self.group = group
        self._lag = lag
        self.namespace = namespace
        self.conn = conn
        self.clock_ms = clock_ms
        self.commit_interval_s = commit_interval_s
        self.counts = Counts()
        self._routes = {(c.spec.topic, c.spec.event_type): c for c in consumers}
        topics = sorted({c.spec.topic for c in consumers})
        self._origin = origins(namespace, group, topics)
        names = list(self._origin)
        if create_topics:
            ensure_group_topics(brokers, namespace, topics, names, partitions, config, connect_timeout_s)
        self._registry = SchemaRegistry(registry_url) if registry_url else None
        self._producer = _SyncProducer(_producer_config(brokers, config), 30.0)
        self._c = _KConsumer(consumer_config(brokers, namespace + group, session_timeout_ms, config))
        self._parts: dict[tuple[str, int], Offsets] = {}
        self._waiting: dict[bytes, collections.deque[Message]] = {}  # keys whose head record is deferred
        self._deferred: list[tuple[int, int, bytes]] = []  # (due ms, seq, key)
        self._seq = 0
        self._last_commit = time.monotonic()
        self._closed = False
        self._c.subscribe(names, on_assign=self._on_assign, on_revoke=self._on_revoke, on_lost=self._on_lost)

    @property
    def assigned(self) -> list[tuple[str, int]]:
        """The (topic, partition) pairs this member holds now."""
        return sorted(self._parts)

    # Partition bookkeeping.

    def _on_assign(self, _c: Any, parts: list[TopicPartition]) -> None:
        for p in parts:
            self._parts[(p.topic, p.partition)] = Offsets()

    def _on_revoke(self, _c: Any, parts: list[TopicPartition]) -> None:
        self.commit({(p.topic, p.partition) for p in parts})
        self._drop(parts)

    def _on_lost(self, _c: Any, parts: list[TopicPartition]) -> None:
        self._drop(parts)

    def _drop(self, parts: list[TopicPartition]) -> None:
        gone = {(p.topic, p.partition) for p in parts}
        for k in gone:
            if self._parts.pop(k, None) is not None and self._lag is not None:
                self._lag.forget(self.group, k[0], k[1])  # another member reports it now
        for key in list(self._waiting):
            q = collections.deque(m for m in self._waiting[key] if _tp(m) not in gone)
            if q:
                self._waiting[key] = q
            else:
                del self._waiting[key]

    def _settle(self, m: Message) -> None:
        ps = self._parts.get(_tp(m))
        if ps is not None:
            ps.pending.discard(_offset(m))

    def commit(self, only: set[tuple[str, int]] | None = None) -> None:
        """Commits every partition's settled prefix that moved since its last commit, synchronously."""
        offs = []
        for k, ps in self._parts.items():
            if (only is None or k in only) and ps.commit_point() > ps.committed:
                offs.append((k, ps, ps.commit_point()))
        if not offs:
            return
        try:
            self._c.commit(offsets=[TopicPartition(k[0], k[1], o) for k, _, o in offs], asynchronous=False)
        except KafkaException as e:
            log.warning("msgcontract: kafka commit failed; the records will be redelivered and deduplicated: %s", e)
            return
        for _, ps, o in offs:
            ps.committed = max(ps.committed, o)

    # The loop.

    def run(self, stop: Callable[[], bool], poll_timeout_s: float = 0.2) -> None:
        """Consumes until stop() is true, then commits what is settled and leaves the group."""
        try:
            while not stop():
                self.step(poll_timeout_s)
        finally:
            self.close()

    def step(self, poll_timeout_s: float = 0.2) -> None:
        """One poll: records due again first, then up to 100 new records, then a commit when due."""
        self._run_due()
        msgs = self._c.consume(100, poll_timeout_s)
        if self._lag is not None:
            report_lag(self._c, self.group, self._parts, self._lag, msgs)
        queues: dict[bytes, collections.deque[Message]] = {}
        for m in msgs:
            seen = take_in(self._parts, m)
            if seen is None:
                continue
            key = seen[1]
            if key in self._waiting:
                self._waiting[key].append(m)  # its key waits for an earlier record
                continue
            queues.setdefault(key, collections.deque()).append(m)
        self._run_keys(queues)
        self._commit_due()

    def _commit_due(self) -> None:
        if time.monotonic() - self._last_commit >= self.commit_interval_s:
            self.commit()
            self._last_commit = time.monotonic()

    def _run_due(self) -> None:
        now = self.clock_ms()
        due: dict[bytes, collections.deque[Message]] = {}
        while self._deferred and self._deferred[0][0] <= now:
            _, _, key = heapq.heappop(self._deferred)
            q = self._waiting.pop(key, None)
            if q:
                due[key] = q
        self._run_keys(due)

    def _run_keys(self, queues: dict[bytes, collections.deque[Message]]) -> None:
        """Handles the queues' records, each key's in order: the heads of up to batch_size keys at a time
        (one transaction when several need the database), until every queue is empty or waits."""
        while queues:
            heads = list(queues.items())[:self.batch_size]
            untils = self._run_batch([q[0] for _, q in heads])
            for (key, q), until in zip(heads, untils, strict=True):
                if until is not None:
                    del queues[key]
                    self._waiting[key] = q  # the rest of the key waits with it
                    self._seq += 1
                    heapq.heappush(self._deferred, (until, self._seq, key))
                    continue
                self._settle(q.popleft())
                if not q:
                    del queues[key]
            self._commit_due()

    def _run_batch(self, msgs: list[Message]) -> list[int | None]:
        """Carries out the decisions on msgs (of distinct keys); for each, the time to try it again when it
        is not settled, else None. Those that reach a handler go through run_routed: their retry chains read
        at once, then one transaction, each in a savepoint (Consumer.process_shared) when there are several; a
        failed transaction hands them all back."""
        untils: list[int | None] = [None] * len(msgs)
        todo: list[tuple[int, Routed[Consumer[Any]], str]] = []
        for i, m in enumerate(msgs):
            try:
                r = route(m.value() or b"", _headers(m), self._origin.get(_tp(m)[0], _tp(m)[0]),
                          self._routes, self.group, self._registry)
            except RegistryUnavailable as e:
                log.warning("msgcontract: schema registry unavailable; the record waits: %s", e)
                untils[i] = self.clock_ms() + INFRA_RETRY_MS
                continue
            if isinstance(r, Refused):
                untils[i] = self._published(self._dead_letter, m, r.topic, r.body, r.env, "", r.dead)
                continue
            todo.append((i, r, delivery_id(m)))
        if not todo:
            return untils
        res = run_routed(self.conn, todo)
        self.counts.deduped += len(res.superseded)
        for i in res.failed:  # the database failed, or its retry chain could not be advanced: no retry counted
            self.counts.handed_back += 1
            untils[i] = self.clock_ms() + INFRA_RETRY_MS
        for i, routed, d in res.decided:
            untils[i] = self._published(self._decided, msgs[i], routed, d)
        return untils

    def _published(self, act: Callable[..., int | None], *args: Any) -> int | None:
        """Runs act(*args), which may publish a retry copy or a dead letter; when the broker did not
        acknowledge it, the record stays unsettled and comes again."""
        try:
            return act(*args)
        except (KafkaException, RuntimeError) as e:
            log.error("msgcontract: kafka publish failed; the record comes again: %s", e)
            return self.clock_ms() + INFRA_RETRY_MS

    def _decided(self, m: Message, r: Routed[Consumer[Any]], d: Decision) -> int | None:
        """Carries out d, the committed decision on m; returns the time to try it again when it waits."""
        if isinstance(d, Ack):
            if d.deduplicated:
                self.counts.deduped += 1
            else:
                self.counts.processed += 1
        elif isinstance(d, Defer):
            return d.not_before_ms
        elif isinstance(d, Retry):
            self._producer.produce(retry_topic(self.namespace, r.topic, self.group),
                                   d.next_envelope.biz_key.encode("utf-8"), encode(d.next_envelope),
                                   [(HEADER_TOPIC, r.topic.encode("utf-8"))])
            self.counts.retried += 1
            self._commit_now(m)
        else:
            self._dead_letter(m, r.topic, r.body, r.env, r.target.handler_name, d)
        return None

    def _dead_letter(self, m: Message, topic: str, body: bytes, env: _envelope_pb2.Envelope | None,
                     handler: str, d: DeadLetter) -> None:
        now = self.clock_ms()
        attempts = env.retry_count + 1 if env is not None and d.reason not in ("decode", "no_handler", "schema") else 0
        meta = dlq_meta(
            topic, self.group, handler, env.event_type if env is not None else "",
            env.biz_key if env is not None else "", env.message_id if env is not None else "", d.reason, d.code,
            d.error, attempts, env.first_failed_at if env is not None and env.first_failed_at > 0 else now, now)
        self._producer.produce(dlq_topic(self.namespace, topic), meta["biz_key"].encode("utf-8"), body,
                               dlq_headers(meta))
        self.counts.dead_lettered += 1
        self._commit_now(m)

    def _commit_now(self, m: Message) -> None:
        """Retries and dead letters are costly to re-run: their partition commits at once."""
        self._settle(m)
        self.commit({_tp(m)})

    def close(self) -> None:
        """Commits what is settled and leaves the group; unsettled records go to the next owner. Idempotent."""
        if self._closed:
            return
        self._closed = True
        self.commit()
        self._c.close()
        self._producer.close()
