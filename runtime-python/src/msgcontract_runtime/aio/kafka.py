"""Kafka for the asyncio consumer: a consumer-group member as a Subscription of AsyncConsumer.

The same topics, headers, dead-letter metadata, Confluent framing and commit
rule as ``msgcontract_runtime.kafka.KafkaConsumerLoop`` (and runtime-go's kafka
transport), from the same helpers of that module. It runs on confluent-kafka
(librdkafka, the ``kafka`` extra): its consumer is called on one thread of
its own (``consume``, ``commit``, ``close``, and the rebalance callbacks
librdkafka runs inside them); everything else runs on the event loop.

- A key's records are handed out one at a time in offset order; other keys
  go on in parallel (up to AsyncConsumer's concurrency).
- A partition's committed offset is its first record whose outcome is not
  durable yet. Commits run every ``commit_interval_s``, at the next fetch
  after a retry copy or a dead letter, on revoke and on close.
- A record not due yet (Defer, or a database error) waits in memory with its
  key; a released record (its handler was cancelled) is never settled, so
  its offset is not committed and it is delivered again.
- On revoke the subscription stops handing out (the fetch that serves the
  rebalance is waiting), waits up to ``revoke_wait_s`` for the revoked
  partitions' records in flight, commits their settled prefix and lets go;
  a lost partition is let go without a commit.
- A delivery's ``delivery_id`` is its record's ``kafka.record_id``: a retry
  copy is published before its record's offset is committed, so
  AsyncConsumer keeps each message to one retry chain (msg_dedup_chain).
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import contextlib
import dataclasses
import functools
import heapq
import logging
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from confluent_kafka import Consumer as _KConsumer, KafkaException, Message, Producer, TopicPartition

from msgcontract.v1 import envelope_pb2 as _envelope_pb2
from msgcontract_runtime import wire
from msgcontract_runtime.aio import DeadLetterRecord, Delivery
from msgcontract_runtime.consumer import Refused
from msgcontract_runtime.envelope import encode
from msgcontract_runtime.event import EventSpec
from msgcontract_runtime.kafka import (
    HEADER_TOPIC,
    INFRA_RETRY_MS,
    LagObserver,
    Offsets,
    RegistryUnavailable,
    SchemaRegistry,
    _headers,
    _now_ms,
    _offset,
    _producer_config,
    _tp,
    consumer_config,
    delivery_id,
    dlq_headers,
    dlq_meta,
    dlq_topic,
    ensure_group_topics,
    origins,
    report_lag,
    retry_topic,
    route,
    take_in,
)

log = logging.getLogger("msgcontract_runtime.aio.kafka")

R = TypeVar("R")
TP = tuple[str, int]


class AsyncProducer:
    """A confluent-kafka producer whose ``produce`` is awaited until the broker acknowledges it.

    A thread of its own serves the delivery reports; each resolves its
    record's future on the event loop.
    """

    def __init__(self, conf: dict[str, Any], timeout_s: float = 30.0) -> None:
        self._p = Producer(conf)
        self.timeout_s = timeout_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, name="msgcontract-kafka-producer", daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            self._p.poll(0.05)

    async def produce(self, topic: str, key: bytes, value: bytes, headers: Sequence[tuple[str, bytes]]) -> None:
        """Publishes one record; raises RuntimeError when the broker refuses it or does not answer in time."""
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[Any] = loop.create_future()

        def report(err: Any, _msg: Any) -> None:  # on the producer's thread
            with contextlib.suppress(RuntimeError):  # RuntimeError: the loop is gone; nobody waits any more
                loop.call_soon_threadsafe(_resolve, fut, err)

        self._p.produce(topic, key=key, value=value, headers=list(headers), on_delivery=report)
        try:
            err = await asyncio.wait_for(fut, self.timeout_s)
        except asyncio.TimeoutError:
            raise RuntimeError(f"kafka: publish to {topic}: no acknowledgement within {self.timeout_s}s") from None
        if err is not None:
            raise RuntimeError(f"kafka: publish to {topic}: {err}")

    async def close(self) -> None:
        """Waits for what is in flight, then stops the report thread."""
        self._stop.set()
        await asyncio.to_thread(self._thread.join)
        await asyncio.to_thread(self._p.flush, self.timeout_s)


def _resolve(fut: asyncio.Future[Any], err: Any) -> None:
    if not fut.done():
        fut.set_result(err)


@dataclasses.dataclass(eq=False)
class _Rec:
    """A record the subscription holds until its outcome is durable."""

    msg: Message
    part: Offsets
    key: bytes
    topic: str = ""  # the user's topic, once routed
    body: bytes | None = None  # the envelope bytes (unframed), once routed
    env: _envelope_pb2.Envelope | None = None  # its envelope, once routed
    attempt: int = 0
    inflight: bool = False
    dropped: bool = False

    @property
    def tp(self) -> TP:
        return _tp(self.msg)


@dataclasses.dataclass
class Counts:
    """What the subscription settled, by kind."""

    acked: int = 0
    retried: int = 0
    dead_lettered: int = 0


class KafkaSubscription:
    """A consumer-group member reading specs' topics and their retry topics for AsyncConsumer.run.

    Open it with ``await KafkaSubscription.open(...)``; close it after run
    returns (close commits what is settled and leaves the group). A record
    whose (topic, event type) is none of specs' is dead-lettered
    ``no_handler``, as KafkaConsumerLoop does: give a group one AsyncConsumer.
    """

    def __init__(self, brokers: str, group: str, specs: Sequence[EventSpec[Any]], namespace: str,
                 registry_url: str | None, config: dict[str, Any] | None, commit_interval_s: float,
                 session_timeout_ms: int, revoke_wait_s: float, max_buffered: int, clock_ms: Callable[[], int],
                 lag: LagObserver | None) -> None:
        self.group = group
        self._lag = lag
        self.namespace = namespace
        self.commit_interval_s = commit_interval_s
        self.revoke_wait_s = revoke_wait_s
        self.max_buffered = max_buffered
        self.clock_ms = clock_ms
        self.counts = Counts()
        self._routes = {(s.topic, s.event_type): s for s in specs}
        self._origin = origins(namespace, group, sorted({s.topic for s in specs}))
        self._registry = SchemaRegistry(registry_url) if registry_url else None
        self._producer = AsyncProducer(_producer_config(brokers, config))
        self._c = _KConsumer(consumer_config(brokers, namespace + group, session_timeout_ms, config))
        self._thread = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="msgcontract-kafka")
        self._loop = asyncio.get_running_loop()
        self._parts: dict[TP, Offsets] = {}
        self._keys: dict[bytes, collections.deque[_Rec]] = {}  # head: handed out, ready or deferred; the rest wait
        self._ready: collections.deque[_Rec] = collections.deque()
        self._deferred: list[tuple[int, int, _Rec]] = []
        self._out: set[_Rec] = set()
        self._seq = 0
        self._last_commit = time.monotonic()
        self._commit_soon = False
        self._closed = False

    @classmethod
    async def open(cls, brokers: str, group: str, specs: Sequence[EventSpec[Any]], namespace: str = "",
                   registry_url: str | None = None, config: dict[str, Any] | None = None, partitions: int = 6,
                   commit_interval_s: float = 0.2, session_timeout_ms: int = 10000, revoke_wait_s: float = 30.0,
                   max_buffered: int = 10_000, create_topics: bool = True,
                   clock_ms: Callable[[], int] = _now_ms, lag: LagObserver | None = None) -> KafkaSubscription:
        """Creates the group's missing topics (as KafkaConsumerLoop does) and joins the group.

        lag (e.g. observe.PrometheusMetrics) sees each held partition's consumer lag after every fetch, as
        KafkaConsumerLoop's does.
        """
        topics = sorted({s.topic for s in specs})
        names = list(origins(namespace, group, topics))
        if create_topics:
            await asyncio.to_thread(ensure_group_topics, brokers, namespace, topics, names, partitions, config)
        sub = cls(brokers, group, specs, namespace, registry_url, config, commit_interval_s, session_timeout_ms,
                  revoke_wait_s, max_buffered, clock_ms, lag)
        await sub._call(functools.partial(sub._c.subscribe, names, on_assign=sub._on_assign,
                                          on_revoke=sub._on_revoke, on_lost=sub._on_lost))
        return sub

    @property
    def assigned(self) -> list[TP]:
        """The (topic, partition) pairs this member holds now."""
        return sorted(self._parts)

    async def _call(self, fn: Callable[[], R]) -> R:
        return await self._loop.run_in_executor(self._thread, fn)

    # Rebalances: librdkafka calls these on the consumer's thread, inside
    # consume or close; each runs its bookkeeping on the loop and waits.

    def _on_loop(self, coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result()

    def _on_assign(self, _c: Any, parts: list[TopicPartition]) -> None:
        self._on_loop(self._assigned([(p.topic, p.partition) for p in parts]))

    def _on_revoke(self, _c: Any, parts: list[TopicPartition]) -> None:
        gone = {(p.topic, p.partition) for p in parts}
        offs = self._on_loop(self._revoking(gone))
        self._on_loop(self._dropped(gone, offs if self._commit(offs) else []))

    def _on_lost(self, _c: Any, parts: list[TopicPartition]) -> None:
        self._on_loop(self._dropped({(p.topic, p.partition) for p in parts}, []))

    async def _assigned(self, tps: list[TP]) -> None:
        for tp in tps:
            self._parts[tp] = Offsets()

    async def _revoking(self, gone: set[TP]) -> list[tuple[str, int, int]]:
        end = time.monotonic() + self.revoke_wait_s
        while any(r.tp in gone for r in self._out) and time.monotonic() < end:
            await asyncio.sleep(0.01)
        return self._offsets(gone)

    async def _dropped(self, gone: set[TP], committed: list[tuple[str, int, int]]) -> None:
        self._committed(committed)
        for tp in gone:
            if self._parts.pop(tp, None) is not None and self._lag is not None:
                self._lag.forget(self.group, tp[0], tp[1])  # another member reports it now
        for key, q in list(self._keys.items()):
            head = q[0]
            keep = collections.deque(r for r in q if r.tp not in gone or r.inflight)
            for r in q:
                r.dropped = r.dropped or r.tp in gone
            if not keep:
                del self._keys[key]
                continue
            self._keys[key] = keep
            if keep[0] is not head:  # the head was dropped: the next record of the key may go
                self._ready.append(keep[0])

    # Offsets and commits.

    def _offsets(self, only: set[TP] | None) -> list[tuple[str, int, int]]:
        return [(tp[0], tp[1], ps.commit_point()) for tp, ps in self._parts.items()
                if (only is None or tp in only) and ps.commit_point() > ps.committed]

    def _committed(self, offs: list[tuple[str, int, int]]) -> None:
        for t, p, o in offs:
            ps = self._parts.get((t, p))
            if ps is not None:
                ps.committed = max(ps.committed, o)

    def _commit(self, offs: list[tuple[str, int, int]]) -> bool:
        """Commits offs synchronously; on the consumer's thread."""
        if not offs:
            return True
        try:
            self._c.commit(offsets=[TopicPartition(t, p, o) for t, p, o in offs], asynchronous=False)
        except KafkaException as e:
            log.warning("msgcontract: kafka commit failed; the records will be redelivered and deduplicated: %s", e)
            return False
        return True

    def _poll(self, offs: list[tuple[str, int, int]], n: int, timeout_s: float) -> tuple[bool, list[Message]]:
        ok = self._commit(offs)
        if n <= 0:
            time.sleep(timeout_s)
            return ok, []
        msgs = list(self._c.consume(n, timeout_s))
        if self._lag is not None:
            report_lag(self._c, self.group, self._parts, self._lag, msgs)
        return ok, msgs

    # Fetching.

    async def fetch(self, max_count: int, wait_s: float) -> Sequence[Delivery]:
        """Up to max_count deliveries: records due again first, then new ones, waiting up to wait_s."""
        if self._closed:
            raise RuntimeError("kafka: the subscription is closed")
        end = time.monotonic() + wait_s
        out: list[Delivery] = []
        while True:
            offs: list[tuple[str, int, int]] = []
            if self._commit_soon or time.monotonic() - self._last_commit >= self.commit_interval_s:
                offs = self._offsets(None)
                self._commit_soon = False
                self._last_commit = time.monotonic()
            timeout = 0.0 if self._ready else max(0.0, end - time.monotonic())
            if self._deferred:
                timeout = min(timeout, max(0.0, (self._deferred[0][0] - self.clock_ms()) / 1000))
            held = sum(len(ps.pending) for ps in self._parts.values())
            n = max(max_count, 64) if held < self.max_buffered else 0
            polled = self._loop.run_in_executor(self._thread, self._poll, offs, n, timeout)
            # A cancelled fetch still takes in what librdkafka handed over.
            polled.add_done_callback(functools.partial(self._ingest, offs))
            await asyncio.shield(polled)
            self._due()
            out += await self._take(max_count - len(out))
            if out or time.monotonic() >= end:
                return out

    def _ingest(self, offs: list[tuple[str, int, int]], f: asyncio.Future[tuple[bool, list[Message]]]) -> None:
        if f.cancelled() or f.exception() is not None:
            return
        ok, msgs = f.result()
        if ok:
            self._committed(offs)
        for m in msgs:
            seen = take_in(self._parts, m)
            if seen is None:
                continue
            ps, key = seen
            rec = _Rec(m, ps, key)
            q = self._keys.get(key)
            if q:
                q.append(rec)  # its key waits for an earlier record
            else:
                self._keys[key] = collections.deque([rec])
                self._ready.append(rec)

    def _due(self) -> None:
        now = self.clock_ms()
        while self._deferred and self._deferred[0][0] <= now:
            _, _, rec = heapq.heappop(self._deferred)
            if not rec.dropped:
                self._ready.append(rec)

    async def _take(self, n: int) -> list[Delivery]:
        out: list[Delivery] = []
        while self._ready and len(out) < n:
            rec = self._ready.popleft()
            if rec.dropped:
                continue
            rec.inflight = True
            self._out.add(rec)
            try:
                routed = rec.body is not None or await self._route(rec)
            except BaseException:
                self._out.discard(rec)
                rec.inflight = False
                self._ready.appendleft(rec)
                raise
            if routed:
                assert rec.body is not None
                rec.attempt += 1
                out.append(Delivery(rec.topic, rec.body, rec.attempt, rec, delivery_id(rec.msg)))
        return out

    async def _route(self, rec: _Rec) -> bool:
        """Routes rec; False when it was settled (dead-lettered before any handler) or deferred."""
        value = rec.msg.value() or b""
        go = functools.partial(route, value, _headers(rec.msg),
                               self._origin.get(rec.tp[0], rec.tp[0]), self._routes, self.group,
                               self._registry)
        try:
            # The registry is asked over HTTP (then cached): off the loop.
            r = await asyncio.to_thread(go) if wire.is_framed(value) and self._registry is not None else go()
        except RegistryUnavailable as e:
            log.warning("msgcontract: schema registry unavailable; the record waits: %s", e)
            self._wait(rec, self.clock_ms() + INFRA_RETRY_MS)
            return False
        if isinstance(r, Refused):
            now = self.clock_ms()
            env = r.env
            first = env.first_failed_at if env is not None and env.first_failed_at > 0 else now
            meta = dlq_meta(r.topic, self.group, "", env.event_type if env is not None else "",
                            env.biz_key if env is not None else "", env.message_id if env is not None else "",
                            r.dead.reason, r.dead.code, r.dead.error, 0, first, now)
            await self._dead(rec, r.topic, r.body, meta)
            return False
        rec.topic, rec.body, rec.env = r.topic, r.body, r.env
        return True

    # Settling, called by AsyncConsumer.

    def _rec(self, d: Delivery) -> _Rec:
        rec = d.handle
        assert isinstance(rec, _Rec)
        return rec

    def _advance(self, rec: _Rec) -> None:
        """rec is done here: the next record of its key may go."""
        rec.inflight = False
        self._out.discard(rec)
        q = self._keys.get(rec.key)
        if not q or q[0] is not rec:
            return
        q.popleft()
        while q and q[0].dropped:
            q.popleft()
        if q:
            self._ready.append(q[0])
        else:
            del self._keys[rec.key]

    def _settle(self, rec: _Rec, commit_now: bool = False) -> None:
        if self._parts.get(rec.tp) is rec.part:
            rec.part.pending.discard(_offset(rec.msg))
        self._advance(rec)
        # Retries and dead letters are costly to re-run: committed at the next fetch.
        self._commit_soon = self._commit_soon or commit_now

    def _wait(self, rec: _Rec, until_ms: int) -> None:
        """rec is tried again at until_ms; its key waits with it."""
        rec.inflight = False
        self._out.discard(rec)
        if rec.dropped:
            self._advance(rec)
            return
        self._seq += 1
        heapq.heappush(self._deferred, (until_ms, self._seq, rec))

    async def ack(self, d: Delivery) -> None:
        self._settle(self._rec(d))
        self.counts.acked += 1

    async def defer(self, d: Delivery, not_before_ms: int) -> None:
        self._wait(self._rec(d), not_before_ms)

    async def release(self, d: Delivery) -> None:
        rec = self._rec(d)
        rec.inflight = False
        self._out.discard(rec)
        if rec.dropped:
            self._advance(rec)
        else:
            self._ready.appendleft(rec)

    async def retry(self, d: Delivery, env: _envelope_pb2.Envelope) -> None:
        rec = self._rec(d)
        try:
            await self._producer.produce(retry_topic(self.namespace, d.topic, self.group), env.biz_key.encode("utf-8"),
                                         encode(env), [(HEADER_TOPIC, d.topic.encode("utf-8"))])
        except (KafkaException, RuntimeError, BufferError) as e:
            # Not acknowledged: the record stays unsettled and is handled again.
            log.error("msgcontract: kafka publish failed; the record comes again: %s", e)
            self._wait(rec, self.clock_ms() + INFRA_RETRY_MS)
            return
        self.counts.retried += 1
        self._settle(rec, commit_now=True)

    async def dead_letter(self, d: Delivery, r: DeadLetterRecord) -> None:
        rec = self._rec(d)
        # The envelope decoded when the record was routed: a payload that did
        # not decode is dead-lettered with its envelope's fields, as KafkaConsumerLoop does.
        env = rec.env if rec.env is not None else _envelope_pb2.Envelope()
        meta = dlq_meta(r.topic, self.group, r.handler, r.event_type or env.event_type, r.biz_key or env.biz_key,
                        r.message_id or env.message_id, r.reason, r.code, r.error, r.attempts, r.first_failed_at,
                        r.dead_at)
        await self._dead(rec, r.topic, r.envelope, meta)

    async def _dead(self, rec: _Rec, topic: str, body: bytes, meta: dict[str, Any]) -> None:
        try:
            await self._producer.produce(dlq_topic(self.namespace, topic), meta["biz_key"].encode("utf-8"), body,
                                         dlq_headers(meta))
        except (KafkaException, RuntimeError, BufferError) as e:
            log.error("msgcontract: kafka publish failed; the record comes again: %s", e)
            self._wait(rec, self.clock_ms() + INFRA_RETRY_MS)
            return
        self.counts.dead_lettered += 1
        self._settle(rec, commit_now=True)

    async def close(self) -> None:
        """Commits what is settled and leaves the group; unsettled records go to the next owner. Idempotent.

        Call it after AsyncConsumer.run returned (cancelled or stopped).
        """
        if self._closed:
            return
        self._closed = True
        offs = self._offsets(None)
        if await self._call(functools.partial(self._commit, offs)):
            self._committed(offs)
        try:
            await self._call(self._c.close)  # revokes every partition through _on_revoke
        finally:
            self._thread.shutdown(wait=False)
            await self._producer.close()


__all__ = ["AsyncProducer", "Counts", "KafkaSubscription"]
