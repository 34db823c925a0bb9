"""The asyncio consumer: the synchronous Consumer's decisions on an event loop.

``AsyncConsumer.process`` makes the same decisions as ``Consumer.process``
(both call ``consumer.admit`` and ``consumer.failed``): decode or
dead-letter, defer when not due, claim (biz_key, handler) in the business
transaction, run the ``async def`` handler in it and commit; on failure roll
back (the claim with it), classify, retry with backoff or dead-letter.
``AsyncConsumer.run`` fetches from a subscription and runs up to
``concurrency`` handlers at once (an ``asyncio.Semaphore``).

On a transport whose retry is a published copy followed by a separate
settle (Kafka, NATS JetStream: ``Delivery.delivery_id`` is set), each
message keeps one retry chain in the business database (``advance``,
``chain_row``; docs/DESIGN.md, "One retry chain per message").

Cancellation is a shutdown, never an outcome: a cancelled handler's
transaction is rolled back and its delivery handed back unacknowledged, so it
is delivered again; cleanup runs in a task of its own that a second
cancellation cannot interrupt.

The drivers are optional extras: ``msgcontract_runtime.aio.sqlite``
(aiosqlite: ``SQLiteDatabase`` and the embedded ``SQLiteQueue``, the Go
runtime's sqlitequeue schema) and ``msgcontract_runtime.aio.postgres``
(asyncpg: ``PostgresDatabase``); this module imports neither.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import math
import random as _random
import time
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from typing import Any, Generic, Protocol, TypeVar

from msgcontract.v1 import envelope_pb2 as _envelope_pb2
from msgcontract_runtime.consumer import (
    Ack,
    Admitted,
    DeadLetter,
    Decision,
    Defer,
    DeliveryTracer,
    Observer,
    Retry,
    admit,
    advances_chain,
    chain_pos,
    failed,
    log_superseded,
    looked_up,
    observe,
    spanned,
    start_span,
    superseded,
)
from msgcontract_runtime.dedup import ChainPos, ChainStep, went_on
from msgcontract_runtime.event import EventSpec, M

log = logging.getLogger("msgcontract_runtime.aio")

R = TypeVar("R")

AsyncHandler = Callable[[Any, M, _envelope_pb2.Envelope], Awaitable[None]]
"""An ``async def handler(tx, message, envelope)``; tx is the driver connection in the business transaction."""


class AsyncTransaction(Protocol):
    """One business transaction on one connection, as an AsyncDatabase begins it."""

    @property
    def conn(self) -> Any:
        """The driver connection handlers use (aiosqlite.Connection, asyncpg.Connection)."""

    async def claim(self, biz_key: str, handler: str, message_id: str, payload_hash: str, now_ms: int) -> bool:
        """Inserts the dedup claim in the transaction; False means a duplicate."""

    async def chain_insert(self, step: ChainStep) -> bool:
        """Inserts step's retry chain row unless the message has one; True when it did (dedup.chain_sql)."""

    async def chain_update(self, step: ChainStep) -> bool:
        """Moves the message's chain row to step's place where it does not supersede it; True when a row changed."""

    async def chain_row(self, handler: str, message_id: str) -> ChainPos | None:
        """The place in the chain row of (handler, message_id), None when there is none."""

    async def commit(self) -> None:
        """Commits the transaction."""

    async def rollback(self) -> None:
        """Rolls the transaction back."""

    async def close(self) -> None:
        """Rolls back what is still open and gives the connection back; safe after a cancellation."""


class SQLTransaction:
    """What both drivers' transactions share: commit and rollback are statements on the connection."""

    def __init__(self, conn: Any) -> None:
        self._conn = conn
        self._open = True

    @property
    def conn(self) -> Any:
        """The driver connection handlers use."""
        return self._conn

    async def commit(self) -> None:
        """Commits the transaction."""
        await self._conn.execute("COMMIT")
        self._open = False

    async def rollback(self) -> None:
        """Rolls the transaction back, once."""
        if self._open:
            self._open = False
            await self._conn.execute("ROLLBACK")


class AsyncDatabase(Protocol):
    """Where the dedup claim and the handlers' writes go, in one transaction."""

    async def begin(self) -> AsyncTransaction:
        """Begins a transaction on a connection of its own."""


@dataclasses.dataclass
class Delivery:
    """One delivered body, as a subscription hands it out.

    delivery_id is set by transports whose retry is a published copy
    followed by a separate settle (Kafka: "<topic>/<partition>/<offset>",
    NATS JetStream: the Nats-Msg-Id): the id of the stored copy, the same on
    each of its redeliveries. Given, AsyncConsumer keeps each message to one
    retry chain (docs/DESIGN.md, "One retry chain per message").
    """

    topic: str
    body: bytes
    attempt: int
    handle: Any
    delivery_id: str | None = None


class Subscription(Protocol):
    """A transport's subscription as AsyncConsumer.run uses it."""

    async def fetch(self, max_count: int, wait_s: float) -> Sequence[Delivery]:
        """Returns up to max_count due deliveries, waiting up to wait_s for the first."""

    async def ack(self, d: Delivery) -> None:
        """Acknowledges d: it is never delivered again."""

    async def defer(self, d: Delivery, not_before_ms: int) -> None:
        """Hands d back, to be delivered again at not_before_ms."""

    async def release(self, d: Delivery) -> None:
        """Hands d back unacknowledged, to be delivered again now (a cancelled or failed attempt)."""

    async def retry(self, d: Delivery, env: _envelope_pb2.Envelope) -> None:
        """Publishes env to the retry destination and acknowledges d, atomically where the transport can."""

    async def dead_letter(self, d: Delivery, record: DeadLetterRecord) -> None:
        """Stores record and acknowledges d, atomically where the transport can."""


@dataclasses.dataclass(frozen=True)
class DeadLetterRecord:
    """A dead-lettered delivery, with the columns of the Go runtime's dlq.Record."""

    topic: str
    handler: str
    event_type: str
    biz_key: str
    message_id: str
    envelope: bytes
    reason: str
    code: int
    error: str
    attempts: int
    first_failed_at: int
    last_failed_at: int
    dead_at: int


_cleanups: set[asyncio.Task[None]] = set()


async def _alone(db: AsyncDatabase, stmt: Callable[[AsyncTransaction], Awaitable[R]]) -> R:
    """stmt in a transaction of db's own, committed: a chain statement, apart from any business transaction."""
    tx = await db.begin()
    try:
        out = await stmt(tx)
        await tx.commit()
        return out
    finally:
        await shielded(tx.close())


async def chain_row(db: AsyncDatabase, handler: str, message_id: str) -> ChainPos | None:
    """dedup.chain_row on an AsyncDatabase: the place in the chain row of (handler, message_id), read on its own."""
    return await _alone(db, lambda tx: tx.chain_row(handler, message_id))


async def advance(db: AsyncDatabase, step: ChainStep) -> tuple[bool, ChainPos]:
    """dedup.advance on an AsyncDatabase: INSERT, else the conditional UPDATE, else read the row back; each
    statement committed in a transaction of its own. (True, step's place) when step goes on."""
    if await _alone(db, lambda tx: tx.chain_insert(step)) or await _alone(db, lambda tx: tx.chain_update(step)):
        return True, step.pos
    return went_on(await chain_row(db, step.handler, step.message_id), step)


async def shielded(coro: Coroutine[Any, Any, None]) -> None:
    """Runs coro to its end in a task of its own, even when the caller is cancelled meanwhile.

    Cleanup (rollback, connection release, handing a delivery back) must not
    be cut short by a second cancellation: the task keeps running, and a
    strong reference keeps it from being collected.
    """
    t = asyncio.ensure_future(coro)
    _cleanups.add(t)
    t.add_done_callback(_cleanups.discard)
    await asyncio.shield(t)


class AsyncConsumer(Generic[M]):
    """The Go runtime's consume protocol on asyncio, for one event and one handler name."""

    def __init__(
        self,
        spec: EventSpec[M],
        handler_name: str,
        handler: AsyncHandler[M],
        concurrency: int = 1,
        clock_ms: Callable[[], int] = lambda: int(time.time() * 1000),
        rand: Callable[[], float] = _random.random,
        database_retry_ms: int = 1000,
        observer: Observer | None = None,
        tracer: DeliveryTracer | None = None,
    ) -> None:
        if concurrency < 1:
            raise ValueError(f"concurrency {concurrency} must be at least 1")
        self.spec = spec
        self.handler_name = handler_name
        self.handler = handler
        self.concurrency = concurrency
        self.clock_ms = clock_ms
        self.rand = rand
        self.database_retry_ms = database_retry_ms
        self.observer = observer
        self.tracer = tracer

    async def process(self, db: AsyncDatabase, body: bytes, delivery_id: str | None = None) -> Decision:
        """Like _process, inside the tracer's span (msgcontract_runtime.tracing) when there is one."""
        if self.tracer is None:  # no tracing call at all without a tracer
            return await self._process(db, body, None, delivery_id)
        out: list[Decision] = []
        span, env = start_span(self.tracer, self.spec.topic, self.handler_name, body, delivery_id)
        with spanned(span, out):
            out.append(await self._process(db, body, env, delivery_id))
        return out[0]

    async def _process(
        self, db: AsyncDatabase, body: bytes, env: _envelope_pb2.Envelope | None = None,
        delivery_id: str | None = None,
    ) -> Decision:
        """Processes one delivered body in a transaction of db; the same decisions as Consumer.process.

        A database error propagates (the message is not at fault); a
        cancellation propagates after the transaction is rolled back. The
        observer, if any, is told every decision but Defer, as Consumer's is.
        With delivery_id (Delivery.delivery_id) the message keeps one retry
        chain: a retry copy or a replay is looked up before its handler runs,
        and a failure advances the chain after its transaction ended; either
        way a copy another one went on past becomes Ack(deduplicated=True).
        """
        run: dict[str, Any] = {"env": None, "seconds": math.nan}
        d = await self._decide(db, body, run, env, delivery_id)
        if delivery_id is not None and run["env"] is not None and advances_chain(d):
            d = await self._advance(db, run["env"], delivery_id, d)
        observe(self.observer, self.handler_name, self.spec, body, run, d, self.clock_ms)
        return d

    async def _superseded(self, db: AsyncDatabase, env: _envelope_pb2.Envelope, delivery_id: str) -> bool:
        """Whether env's copy, a retry copy or a replay, was superseded before its handler runs (then logged).
        A failed look-up lets it run: the advance decides again."""
        if not looked_up(env):
            return False
        try:
            went = await chain_row(db, self.handler_name, env.message_id)
        except Exception as e:  # the database's failure
            log.warning("msgcontract: %s: retry chain look-up failed; running the handler: %s", self.handler_name, e)
            return False
        if went is None or not superseded(went, chain_pos(env, delivery_id)):
            return False
        log_superseded(self.handler_name, env, went)
        return True

    async def _advance(self, db: AsyncDatabase, env: _envelope_pb2.Envelope, delivery_id: str,
                       d: Decision) -> Decision:
        """d, a failure about to go on, once the retry chain moved on to it; Ack(deduplicated=True) when
        another copy went on instead. Raises the database's error: the delivery is handed back."""
        ok, went = await advance(db, ChainStep(self.handler_name, env.message_id, chain_pos(env, delivery_id),
                                               self.clock_ms()))
        if ok:
            return d
        log_superseded(self.handler_name, env, went)
        return Ack(deduplicated=True)

    async def _decide(
        self, db: AsyncDatabase, body: bytes, run: dict[str, Any], env: _envelope_pb2.Envelope | None,
        delivery_id: str | None,
    ) -> Decision:
        now = self.clock_ms()
        a = admit(self.spec, body, now, env)
        if not isinstance(a, Admitted):
            return a
        env = run["env"] = a.envelope
        if delivery_id is not None and await self._superseded(db, env, delivery_id):
            return Ack(deduplicated=True)
        tx = await db.begin()
        try:
            if not await tx.claim(env.biz_key, self.handler_name, env.message_id, a.payload_hash, now):
                await tx.rollback()
                return Ack(deduplicated=True)
            start = time.perf_counter()
            try:
                await self.handler(tx.conn, a.message, env)
            except Exception as e:  # handlers may fail in any way; every failure is classified
                run["seconds"] = time.perf_counter() - start
                await tx.rollback()
                return failed(self.spec, env, e, now, self.rand())
            run["seconds"] = time.perf_counter() - start
            await tx.commit()
            return Ack()
        finally:
            await shielded(tx.close())

    def record(self, d: Delivery, dl: DeadLetter) -> DeadLetterRecord:
        """The dead-letter record of d for the decision dl."""
        now = self.clock_ms()
        env = dl.envelope
        first = env.first_failed_at if env is not None and env.first_failed_at else now
        return DeadLetterRecord(
            topic=d.topic,
            handler=self.handler_name,
            event_type=env.event_type if env is not None else "",
            biz_key=env.biz_key if env is not None else "",
            message_id=env.message_id if env is not None else "",
            envelope=d.body,
            reason=dl.reason,
            code=dl.code,
            error=dl.error,
            attempts=dl.attempts,
            first_failed_at=first,
            last_failed_at=now,
            dead_at=now,
        )

    async def handle(self, sub: Subscription, db: AsyncDatabase, d: Delivery) -> Decision | None:
        """Processes d and settles it on sub; None when a database error handed it back.

        Cancelled before the decision is settled, d is released unacknowledged.
        """
        try:
            decision = await self.process(db, d.body, d.delivery_id)
        except asyncio.CancelledError:
            await shielded(sub.release(d))
            raise
        except Exception:
            log.exception("msgcontract: %s: database error; the delivery is handed back", self.handler_name)
            await shielded(sub.defer(d, self.clock_ms() + self.database_retry_ms))
            return None
        if isinstance(decision, Ack):
            await sub.ack(d)
        elif isinstance(decision, Defer):
            await sub.defer(d, decision.not_before_ms)
        elif isinstance(decision, Retry):
            await sub.retry(d, decision.next_envelope)
        else:
            await sub.dead_letter(d, self.record(d, decision))
        return decision

    async def run(
        self,
        sub: Subscription,
        db: AsyncDatabase,
        stop: asyncio.Event | None = None,
        poll_s: float = 0.05,
    ) -> None:
        """Consumes sub until stop is set (in-flight handlers finish) or the task is cancelled.

        At most ``concurrency`` deliveries are in flight. On cancellation every
        in-flight handler is cancelled, its transaction rolled back and its
        delivery released; run returns only after that cleanup.
        """
        sem = asyncio.Semaphore(self.concurrency)
        tasks: set[asyncio.Task[Decision | None]] = set()

        def done(t: asyncio.Task[Decision | None]) -> None:
            tasks.discard(t)
            sem.release()
            if not t.cancelled() and t.exception() is not None:
                log.error("msgcontract: %s: settling failed", self.handler_name, exc_info=t.exception())

        try:
            while stop is None or not stop.is_set():
                await sem.acquire()
                n = 1
                while n < self.concurrency and not sem.locked():
                    await sem.acquire()
                    n += 1
                try:
                    ds = await sub.fetch(n, poll_s)
                except BaseException:
                    for _ in range(n):
                        sem.release()
                    raise
                for _ in range(n - len(ds)):
                    sem.release()
                for d in ds:
                    t = asyncio.create_task(self.handle(sub, db, d))
                    tasks.add(t)
                    t.add_done_callback(done)
            if tasks:
                await asyncio.wait(set(tasks))
        finally:
            pending = set(tasks)
            for t in pending:
                t.cancel()
            if pending:
                await shielded(_wait_all(pending))


async def _wait_all(tasks: set[asyncio.Task[Decision | None]]) -> None:
    await asyncio.wait(tasks)


class Registry:
    """The async consumers a service registered, one per (event, handler name)."""

    def __init__(self) -> None:
        self.consumers: list[AsyncConsumer[Any]] = []

    def add(self, c: AsyncConsumer[M]) -> AsyncConsumer[M]:
        """Adds c; a second handler of the same name for the same event is an error."""
        for o in self.consumers:
            if o.spec.full_name == c.spec.full_name and o.handler_name == c.handler_name:
                raise ValueError(f"handler {c.handler_name!r} is already registered for {c.spec.full_name}")
        self.consumers.append(c)
        return c

    def topics(self) -> list[str]:
        """The registered events' topics, each once, in registration order."""
        seen: list[str] = []
        for c in self.consumers:
            if c.spec.topic not in seen:
                seen.append(c.spec.topic)
        return seen


def register(
    registry: Registry,
    spec: EventSpec[M],
    handler_name: str,
    handler: AsyncHandler[M],
    concurrency: int = 1,
    observer: Observer | None = None,
    tracer: DeliveryTracer | None = None,
) -> AsyncConsumer[M]:
    """Registers an async handler of spec's event; what generated register_*_handler_async calls."""
    return registry.add(AsyncConsumer(
        spec, handler_name, handler, concurrency=concurrency, observer=observer, tracer=tracer,
    ))


__all__ = [
    "AsyncConsumer",
    "AsyncDatabase",
    "AsyncHandler",
    "AsyncTransaction",
    "DeadLetterRecord",
    "Delivery",
    "Registry",
    "SQLTransaction",
    "Subscription",
    "advance",
    "chain_row",
    "register",
    "shielded",
]
