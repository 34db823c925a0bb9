"""The transport-neutral consumer skeleton and the decisions it returns."""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import math
import random as _random
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Generic, Protocol, TypeVar

from msgcontract.v1 import envelope_pb2 as _envelope_pb2
from msgcontract_runtime import payload_hash
from msgcontract_runtime.classify import ContractError
from msgcontract_runtime.dedup import (
    ChainPos,
    ChainStep,
    advance_all,
    begin as begin,  # callers of process_shared open the transaction with it
    chain_row,
    chain_rows,
    claim,
)
from msgcontract_runtime.envelope import decode, payload
from msgcontract_runtime.event import DecodeError, EventSpec, M

log = logging.getLogger("msgcontract_runtime.consumer")


@dataclasses.dataclass(frozen=True)
class Ack:
    """Acknowledge the delivery; deduplicated is true when the handler did not run."""

    deduplicated: bool = False


@dataclasses.dataclass(frozen=True)
class Defer:
    """Hand the delivery back unacknowledged until not_before_ms: it is not due yet."""

    not_before_ms: int


@dataclasses.dataclass(frozen=True)
class Retry:
    """Publish next_envelope to the retry destination, then acknowledge."""

    next_envelope: _envelope_pb2.Envelope
    delay_ms: int


@dataclasses.dataclass(frozen=True)
class DeadLetter:
    """Publish the original body to the dead-letter destination, then acknowledge.

    reason is "decode", "non_retryable" or "retries_exhausted".
    """

    reason: str
    code: int
    error: str
    attempts: int
    # The classification's range ("" for a decode failure or no range) and
    # the decoded envelope (None when the body did not decode): what a
    # transport's dead-letter record holds; not part of equality.
    range_name: str = dataclasses.field(default="", compare=False)
    envelope: _envelope_pb2.Envelope | None = dataclasses.field(default=None, compare=False, repr=False)


Decision = Ack | Defer | Retry | DeadLetter
"""What the transport must do with a delivery; the caller publishes it."""

CODE_DECODE = -3
"""The code of a message that did not decode, as in the Go runtime."""

CODE_NO_HANDLER = -4
"""The code of a message no handler of the group takes, as in the Go runtime."""

MAX_ERROR_MESSAGE = 512
"""The largest last_error message kept, in bytes, as in the Go runtime."""


@dataclasses.dataclass(frozen=True)
class Outcome:
    """One delivery's outcome, as an observer sees it (docs/DESIGN.md, "Observability").

    handler and event_type are "" and envelope None when the envelope did not
    decode (as in Go, where routing needs it);
    handler_seconds is NaN when the handler did not run;
    end_to_end_seconds, for a handled delivery, is the time from the
    envelope's occurred_at to the consumer's clock once its transaction
    committed (0 when the producer's clock is ahead), NaN for every other
    outcome and for an envelope without occurred_at.
    """

    handler: str
    topic: str
    event_type: str
    envelope: _envelope_pb2.Envelope | None
    decision: Decision
    handler_seconds: float
    end_to_end_seconds: float = math.nan

    @property
    def label(self) -> str | None:
        """The outcome label: handled, deduplicated, retry_scheduled, dead_lettered; None when deferred."""
        d = self.decision
        if isinstance(d, Ack):
            return "deduplicated" if d.deduplicated else "handled"
        if isinstance(d, Retry):
            return "retry_scheduled"
        if isinstance(d, DeadLetter):
            return "dead_lettered"
        return None


Observer = Callable[[Outcome], None]
"""Told every final outcome: msgcontract_runtime.observe has metrics and JSON logs."""

Handler = Callable[[Any, M, _envelope_pb2.Envelope], None]
"""A ``def handler(tx, message, envelope)``; tx is the connection in the business transaction
(Java's ``Handler<M>``; ``msgcontract_runtime.aio.AsyncHandler`` is its asyncio form)."""

def end_to_end_seconds(env: _envelope_pb2.Envelope, now_ms: int) -> float:
    """The time from env's occurred_at to now_ms, as Outcome.end_to_end_seconds holds it: NaN without
    occurred_at, never negative (a negative observation would lower a histogram's sum, which Prometheus'
    rate() reads as a counter reset)."""
    if env.occurred_at <= 0:
        return math.nan
    return max(now_ms - env.occurred_at, 0) / 1000.0


def observe(observer: Observer | None, handler_name: str, spec: EventSpec[M], body: bytes,
            run: dict[str, Any], d: Decision, clock_ms: Callable[[], int] | None = None) -> None:
    """Tells observer d's outcome, as Consumer and aio.AsyncConsumer both do: every decision but Defer.

    run holds what the consumer saw: "env", the admitted envelope (None when
    the body was not admitted), and "seconds", the handler's run time (NaN
    when it did not run). A dead letter whose envelope decoded and only its
    payload did not names the handler; one whose envelope did not decode
    belongs to no handler, as in Go. clock_ms, the consumer's clock, is read
    for a handled delivery's end-to-end latency: the caller reports after
    the commit.
    """
    if observer is None or isinstance(d, Defer):
        return
    env = run["env"]
    if env is None and isinstance(d, DeadLetter):
        with contextlib.suppress(DecodeError):
            env = decode(body)
    e2e = math.nan
    if clock_ms is not None and env is not None and isinstance(d, Ack) and not d.deduplicated:
        e2e = end_to_end_seconds(env, clock_ms())
    observer(Outcome(
        handler_name if env is not None else "", spec.topic,
        env.event_type if env is not None else "", env, d, run["seconds"], e2e,
    ))


class TracedDelivery(Protocol):
    """One delivery's span, as a DeliveryTracer starts it."""

    def activate(self) -> contextlib.AbstractContextManager[None]:
        """Makes the span current while the consumer claims and runs the handler."""

    def end(self, decision: Decision | None, error: BaseException | None) -> None:
        """Records the outcome (decision None: the database failed, handed back) and ends the span."""


class DeliveryTracer(Protocol):
    """Starts a span per delivery whose envelope decodes: msgcontract_runtime.tracing.Tracing (OpenTelemetry)."""

    def start(self, topic: str, handler: str, envelope: _envelope_pb2.Envelope,
              delivery_id: str | None = None) -> TracedDelivery:
        """Starts the span of one delivery, continuing envelope's trace.

        delivery_id is the transport's id of the delivery, from which the
        tracer may read where the message sat (Kafka:
        ``<topic>/<partition>/<offset>``).
        """


def start_span(
    tracer: DeliveryTracer | None, topic: str, handler: str, body: bytes, delivery_id: str | None = None,
) -> tuple[TracedDelivery | None, _envelope_pb2.Envelope | None]:
    """tracer's span for body and the envelope it decoded, which admit then reuses.

    Both are None without a tracer or when the envelope does not decode (as
    in Go, such a delivery has no span).
    """
    if tracer is None:
        return None, None
    try:
        env = decode(body)
    except DecodeError:
        return None, None
    return tracer.start(topic, handler, env, delivery_id), env


@contextlib.contextmanager
def spanned(span: TracedDelivery | None, out: list[Decision]) -> Iterator[None]:
    """Runs the body inside span (when there is one) and ends it with the decision the body appends to out.

    An exception (a database failure, a cancellation) ends it as handed back.
    """
    if span is None:
        yield
        return
    try:
        with span.activate():
            yield
    except BaseException as e:
        span.end(None, e)
        raise
    span.end(out[0] if out else None, None)


def _truncate(s: str) -> str:
    b = s.encode("utf-8")
    if len(b) <= MAX_ERROR_MESSAGE:
        return s
    return b[:MAX_ERROR_MESSAGE].decode("utf-8", errors="ignore")


@dataclasses.dataclass(frozen=True)
class Admitted(Generic[M]):
    """A delivery that decoded and is due: claim it, then run its handler."""

    envelope: _envelope_pb2.Envelope
    message: M
    payload_hash: str


def admit(
    spec: EventSpec[M], body: bytes, now_ms: int, env: _envelope_pb2.Envelope | None = None,
) -> Admitted[M] | DeadLetter | Defer:
    """The first decision on a delivered body, shared by Consumer and aio.AsyncConsumer.

    A body that does not decode is dead-lettered (never retried); one whose
    not_before is after now_ms is deferred; otherwise it is admitted with the
    payload hash its claim stores. env, when given, is body's envelope
    already decoded (by start_span), so it is not decoded twice.
    """
    try:
        if env is None:
            env = decode(body)
        message = payload(spec, env)
    except DecodeError as e:
        return DeadLetter("decode", CODE_DECODE, _truncate(str(e)), 0)
    if env.not_before > now_ms:
        return Defer(env.not_before)
    return Admitted(env, message, payload_hash.of(message))


def failed(spec: EventSpec[M], env: _envelope_pb2.Envelope, err: BaseException, now_ms: int, u: float) -> Decision:
    """The decision after a handler failed (its transaction rolled back), shared by both consumers.

    The contract's ranges classify err; a retryable failure within the retry
    policy is retried after the backoff delay for the uniform sample u, any
    other is dead-lettered.
    """
    c = spec.rules.classify_error(err)
    code = err.code if isinstance(err, ContractError) else 0
    msg = _truncate(str(err))
    n = env.retry_count + 1
    if c.retryable and not spec.retry.dead_letter(n):
        delay = spec.retry.delay_ms(n, u)
        nxt = _envelope_pb2.Envelope()
        nxt.CopyFrom(env)
        nxt.retry_count = n
        nxt.not_before = now_ms + delay
        nxt.last_error.CopyFrom(
            _envelope_pb2.LastError(
                code=code, message=msg, retryable=c.retryable, range=c.range_name, failed_at=now_ms
            )
        )
        if env.first_failed_at == 0:
            nxt.first_failed_at = now_ms
        return Retry(nxt, delay)
    reason = "retries_exhausted" if c.retryable else "non_retryable"
    return DeadLetter(reason, code, msg, n, range_name=c.range_name, envelope=env)


def superseded(went: ChainPos, c: ChainPos) -> bool:
    """Whether the copy at c must stop because the copy at went, the chain row's, went on: a later replay, a
    later attempt of the same replay, or the same attempt under another delivery id.

    The rule of docs/DESIGN.md's "One retry chain per message" in one place,
    runtime-go's dedup.Superseded; both consumers decide by it. So a
    producer's duplicate of a first delivery that went on, the first
    delivery redelivered after its retry went on, and a second copy of an
    attempt all stop; the copy that went on, delivered again, goes on again
    (its retry may not have been published); a replay starts afresh.
    """
    if went.replay_count != c.replay_count:
        return went.replay_count > c.replay_count
    return went.attempt > c.attempt or (went.attempt == c.attempt and went.delivery_id != c.delivery_id)


def chain_pos(env: _envelope_pb2.Envelope, delivery_id: str) -> ChainPos:
    """The place in env's retry chain of its copy stored as delivery_id."""
    return ChainPos(env.replay_count, env.retry_count, delivery_id)


def looked_up(env: _envelope_pb2.Envelope) -> bool:
    """Whether env's copy is looked up in the chain before its handler runs: a retry copy or a replay (a first
    delivery, the common case, costs nothing)."""
    return env.retry_count > 0 or env.replay_count > 0


def advances_chain(d: Decision) -> bool:
    """Whether d is a handler's failure about to be retried or dead-lettered: what moves the retry chain on.

    A body that did not decode is dead-lettered at once, as in Go, without a chain.
    """
    return isinstance(d, Retry) or (isinstance(d, DeadLetter) and d.reason in ("retries_exhausted", "non_retryable"))


def log_superseded(handler_name: str, env: _envelope_pb2.Envelope, went: ChainPos) -> None:
    """The line runtime-go logs when it acknowledges a superseded copy."""
    log.info("msgcontract: superseded copy acknowledged: another copy of this message went on "
             "(handler=%s message_id=%s biz_key=%s outcome=deduplicated chain_replay_count=%d chain_attempt=%d "
             "chain_delivery_id=%s)", handler_name, env.message_id, env.biz_key, went.replay_count, went.attempt,
             went.delivery_id)


class Consumer(Generic[M]):
    """The Go runtime's consume protocol on a DB-API connection, transport-neutral.

    Per delivery: decode (a failure is dead-lettered, never retried); defer
    when not_before is in the future; claim (biz_key, handler) in the
    connection's transaction (a duplicate is acknowledged without running the
    handler); run the handler in that transaction and commit; on failure roll
    back (the claim with it), classify, and retry with backoff or dead-letter.
    process gives a delivery a transaction of its own; process_shared a
    savepoint in one that several deliveries share.

    On a transport whose retry is a published copy followed by a separate
    settle (Kafka), the transport passes each delivery's id (delivery_id)
    and the message keeps one retry chain (docs/DESIGN.md): drop_superseded
    first settles a retry copy or replay that another copy already went on
    past, and a failure advances the chain (dedup.advance) before it is
    retried or dead-lettered; a copy the chain refuses becomes
    Ack(deduplicated=True).
    """

    def __init__(
        self,
        spec: EventSpec[M],
        handler_name: str,
        handler: Handler[M],
        clock_ms: Callable[[], int] = lambda: int(time.time() * 1000),
        rand: Callable[[], float] = _random.random,
        paramstyle: str = "qmark",
        observer: Observer | None = None,
        tracer: DeliveryTracer | None = None,
    ) -> None:
        self.spec = spec
        self.tracer = tracer
        self.handler_name = handler_name
        self.handler = handler
        self.clock_ms = clock_ms
        self.rand = rand
        self.paramstyle = paramstyle
        self.observer = observer

    def process(self, conn: Any, body: bytes, delivery_id: str | None = None) -> Decision:
        """Processes one delivered body; the consumer commits or rolls back conn.

        A database error propagates: the message is not at fault and the
        caller hands the delivery back without counting a retry. The
        observer, if any, is told every decision but Defer; the tracer, if
        any, spans the claim, the handler and the outcome. delivery_id (see
        the class): a failure advances the retry chain after the rollback.
        """
        p = self._run(conn, body, _OwnTransaction(conn), delivery_id)
        p.committed()
        return p.decision

    def lookup_id(self, body: bytes, env: _envelope_pb2.Envelope | None = None) -> str | None:
        """The message id whose retry chain drop_superseded reads for body: a retry copy or a replay (looked_up)
        that decodes and is due; None for any other (a first delivery costs nothing). env is body's envelope
        when the caller decoded it already."""
        if env is None:
            try:
                env = decode(body)
            except DecodeError:
                return None
        if not looked_up(env):
            return None
        a = admit(self.spec, body, self.clock_ms(), env)
        return env.message_id if isinstance(a, Admitted) else None  # else process dead-letters or defers it

    def drop_superseded(self, conn: Any, body: bytes, delivery_id: str,
                        env: _envelope_pb2.Envelope | None = None) -> bool:
        """Whether body, stored as delivery_id, is a copy that another copy of its message already went on past
        (superseded); it is then settled like a duplicate (settle_superseded), and its handler must not run.

        The transport calls it before process or the shared transaction:
        only a copy lookup_id names is looked up, in a read committed on its
        own (runtime-go's consumer looks it up at the same point; run_routed
        reads a batch's rows at once and calls settle_superseded). env is
        body's envelope when the caller decoded it already. A failed look-up
        is logged and lets the copy run: dedup.advance decides again if it
        fails.
        """
        if env is None:
            try:
                env = decode(body)
            except DecodeError:
                return False
        message_id = self.lookup_id(body, env)
        if message_id is None:
            return False
        try:
            went = chain_row(conn, self.handler_name, message_id, self.paramstyle)
        except Exception as e:  # the database's failure; the chain is advanced before the copy goes on
            log.warning("msgcontract: retry chain look-up failed; running the handler: %s", e)
            return False
        return self.settle_superseded(body, delivery_id, env, went)

    def settle_superseded(self, body: bytes, delivery_id: str, env: _envelope_pb2.Envelope,
                          went: ChainPos | None) -> bool:
        """Whether body (env), stored as delivery_id, is superseded by went, its message's chain row as read
        (None: no row); it is then settled like a duplicate: observed and traced as Ack(deduplicated=True) and
        logged."""
        if went is None or not superseded(went, chain_pos(env, delivery_id)):
            return False
        log_superseded(self.handler_name, env, went)
        d = Ack(deduplicated=True)
        span, _ = start_span(self.tracer, self.spec.topic, self.handler_name, body, delivery_id)
        if span is not None:
            span.end(d, None)
        observe(self.observer, self.handler_name, self.spec, body, {"env": env, "seconds": math.nan}, d)
        return True

    def process_shared(self, conn: Any, body: bytes, delivery_id: str | None = None) -> Pending:
        """Processes one delivered body inside conn's open transaction, which other deliveries share.

        As runtime-go's consumer shares one transaction among a fetch's
        messages: the claim and the handler run inside a savepoint, released
        when the handler succeeds and rolled back when it fails or the claim
        is a duplicate, so a failing delivery takes back its own claim and
        writes and nobody else's. The caller opens the transaction (begin)
        and commits it; handlers must not commit or roll back themselves.
        The decision holds once the commit succeeds: the caller then calls
        Pending.committed(), or Pending.lost(error) when the transaction
        failed and every delivery in it is handed back. A database error
        raised here means the same for the whole transaction. delivery_id
        (see the class): committed() advances a failure's retry chain, after
        the shared transaction ended, and may raise a database error: that
        delivery alone is then handed back.
        """
        return self._run(conn, body, _Savepoint(conn), delivery_id)

    def _run(self, conn: Any, body: bytes, scope: _Scope, delivery_id: str | None) -> Pending:
        """The delivery's steps in scope, inside its span when there is a tracer (no tracing call at all
        without one); the outcome is reported when the caller settles the returned Pending."""
        run: dict[str, Any] = {"env": None, "seconds": math.nan}
        span, env = start_span(self.tracer, self.spec.topic, self.handler_name, body, delivery_id)
        try:
            if span is None:
                d = self._decide(conn, body, run, env, scope)
            else:
                with span.activate():
                    d = self._decide(conn, body, run, env, scope)
        except BaseException as e:  # a database failure, a cancellation: handed back
            if span is not None:
                span.end(None, e)
            raise

        env = run["env"]
        step = None
        if delivery_id is not None and env is not None and advances_chain(d):
            step = ChainStep(self.handler_name, env.message_id, chain_pos(env, delivery_id), self.clock_ms())

        def settle(went_on: tuple[bool, ChainPos]) -> Decision:
            ok, went = went_on
            if ok:
                return d
            log_superseded(self.handler_name, run["env"], went)
            return Ack(deduplicated=True)

        def report(final: Decision) -> None:
            if span is not None:
                span.end(final, None)
            observe(self.observer, self.handler_name, self.spec, body, run, final, self.clock_ms)

        def lose(err: BaseException) -> None:
            if span is not None:
                span.end(None, err)

        return Pending(d, Chain(conn, step, self.paramstyle, settle) if step is not None else None, report, lose)

    def _decide(self, conn: Any, body: bytes, run: dict[str, Any], env: _envelope_pb2.Envelope | None,
                scope: _Scope) -> Decision:
        """The delivery's steps, its claim and handler inside scope: a transaction of its own or a savepoint."""
        now = self.clock_ms()
        a = admit(self.spec, body, now, env)
        if not isinstance(a, Admitted):
            return a
        env = a.envelope
        run["env"] = env
        scope.begin()
        try:
            claimed = claim(
                conn, env.biz_key, self.handler_name, env.message_id, a.payload_hash, now, self.paramstyle,
            )
        except Exception:
            scope.undo()
            raise
        if not claimed:
            scope.undo()
            return Ack(deduplicated=True)
        start = time.perf_counter()
        try:
            self.handler(conn, a.message, env)
        except Exception as e:  # handlers may fail in any way; every failure is classified
            run["seconds"] = time.perf_counter() - start
            scope.undo()
            return failed(self.spec, env, e, now, self.rand())
        run["seconds"] = time.perf_counter() - start
        # A failed commit is the database's failure, not the message's: it
        # propagates and the delivery is handed back uncounted.
        scope.keep()
        return Ack()


@dataclasses.dataclass
class Chain:
    """A failure's step in its message's retry chain, to advance once its transaction committed, and what the
    decision becomes when it did (went on) or another copy went on instead (superseded)."""

    conn: Any
    step: ChainStep
    paramstyle: str
    settle: Callable[[tuple[bool, ChainPos]], Decision]


class Pending:
    """A decision taken in a transaction the caller commits (Consumer.process_shared).

    Its outcome is reported (observer, span) once the caller says how the
    transaction ended; only the first of committed() and lost() counts. A
    failure's retry chain (chain, None for any other decision) is advanced
    before: alone by committed(), or with the other failures of its
    transaction by process_batch.
    """

    def __init__(self, decision: Decision, chain: Chain | None, report: Callable[[Decision], None],
                 lose: Callable[[BaseException], None]) -> None:
        self.decision = decision
        self.chain = chain
        self._report = report
        self._lose = lose
        self._ended = False

    def committed(self, went_on: tuple[bool, ChainPos] | Exception | None = None) -> None:
        """The transaction committed: a failure's retry chain is advanced, unless went_on is what advancing it
        came to (advance_all), and the decision becomes Ack(deduplicated=True) when another copy went on; then
        the decision is reported.

        A database error advancing the chain is raised after the span ends
        as handed back; nothing is reported, and the caller hands the
        delivery back.
        """
        if self._ended:
            return
        self._ended = True
        try:
            if self.chain is not None:
                if went_on is None:
                    went_on = advance_all(self.chain.conn, [self.chain.step], self.chain.paramstyle)[0]
                if isinstance(went_on, Exception):
                    raise went_on
                self.decision = self.chain.settle(went_on)
        except BaseException as e:
            self._lose(e)
            raise
        self._report(self.decision)

    def lost(self, err: BaseException) -> None:
        """The transaction failed with err: nothing is observed, the span ends handed back."""
        if not self._ended:
            self._ended = True
            self._lose(err)


class _Scope(Protocol):
    """Where one delivery's claim and handler begin and end."""

    def begin(self) -> None: ...

    def keep(self) -> None: ...

    def undo(self) -> None: ...


class _OwnTransaction:
    """The delivery's own transaction: kept by a commit, undone by a rollback."""

    def __init__(self, conn: Any) -> None:
        self.conn = conn

    def begin(self) -> None:
        pass  # DB-API drivers open the transaction at the claim

    def keep(self) -> None:
        self.conn.commit()

    def undo(self) -> None:
        self.conn.rollback()


SAVEPOINT = "mc_delivery"
"""The savepoint each delivery of a shared transaction runs in, one after the other."""


class _Savepoint:
    """The delivery's savepoint in a transaction shared with others."""

    def __init__(self, conn: Any) -> None:
        self.conn = conn

    def _exec(self, sql: str) -> None:
        cur = self.conn.cursor()
        try:
            cur.execute(sql)
        finally:
            cur.close()

    def begin(self) -> None:
        self._exec("SAVEPOINT " + SAVEPOINT)

    def keep(self) -> None:
        self._exec("RELEASE SAVEPOINT " + SAVEPOINT)

    def undo(self) -> None:
        # ROLLBACK TO keeps the savepoint: release it too, so the next
        # delivery's SAVEPOINT does not nest inside it.
        self._exec("ROLLBACK TO SAVEPOINT " + SAVEPOINT)
        self._exec("RELEASE SAVEPOINT " + SAVEPOINT)


def process_batch(conn: Any, batch: list[tuple[Consumer[Any], bytes, str]]) -> list[Decision | None]:
    """Runs a broker loop's batch, (consumer, body, delivery id) each, in one transaction of conn and
    commits it; raises when it failed, leaving the rollback to the caller. Then the failures advance their
    retry chains, together in one more transaction (dedup.advance_all): None for a delivery whose advance the
    database failed, to be handed back. The Kafka, RabbitMQ and RocketMQ loops share it."""
    pending: list[Pending] = []
    try:
        begin(conn)
        for target, body, did in batch:
            pending.append(target.process_shared(conn, body, did))
        conn.commit()
    except BaseException as e:  # the caller rolls back
        for p in pending:
            p.lost(e)
        raise
    went_on: dict[int, tuple[bool, ChainPos] | Exception] = {}
    chains = [(i, p.chain) for i, p in enumerate(pending) if p.chain is not None]
    if chains:
        try:
            done = advance_all(conn, [c.step for _, c in chains], chains[0][1].paramstyle)
            went_on = {i: r for (i, _), r in zip(chains, done, strict=True)}
        except Exception as e:  # the transaction failed: none went on
            went_on = {i: e for i, _ in chains}
    out: list[Decision | None] = []
    for i, p in enumerate(pending):
        try:
            p.committed(went_on.get(i))
        except Exception as e:  # the database failed: not the message's fault, no retry counted
            log.error("msgcontract: database failure, message handed back (advance retry chain): %s", e)
            out.append(None)
            continue
        out.append(p.decision)
    return out


T = TypeVar("T")


@dataclasses.dataclass
class Routed(Generic[T]):
    """A broker loop's delivery to hand to target: its topic, envelope bytes and envelope."""

    topic: str
    body: bytes
    env: _envelope_pb2.Envelope
    target: T


@dataclasses.dataclass
class Refused:
    """A delivery dead-lettered before any handler: not an envelope (or, on Kafka, not framed right), or no
    handler for it."""

    topic: str
    body: bytes
    env: _envelope_pb2.Envelope | None
    dead: DeadLetter


def route_envelope(body: bytes, topic: str, routes: dict[tuple[str, str], T], group: str) -> Routed[T] | Refused:
    """Where a broker loop's envelope bytes go: by (topic, event type), then by the envelope's own topic;
    else a decode or no_handler dead letter. The Kafka loop calls it after unframing, the RabbitMQ loop as is."""
    try:
        env = decode(body)
    except DecodeError as e:
        return Refused(topic, body, None, DeadLetter("decode", CODE_DECODE, str(e), 0))
    target = routes.get((topic, env.event_type))
    if target is None and env.topic and env.topic != topic:
        topic = env.topic
        target = routes.get((topic, env.event_type))
    if target is None:
        msg = f"no handler for event type {env.event_type!r} on topic {topic!r} in group {group!r}"
        return Refused(topic, body, env, DeadLetter("no_handler", CODE_NO_HANDLER, msg, 0))
    return Routed(topic, body, env, target)


D = TypeVar("D")


@dataclasses.dataclass
class RoutedRun(Generic[D]):
    """What run_routed came to: the decisions to carry out, the deliveries settled as duplicates at the
    look-up, and those whose database part failed (none of their effects committed; they run again)."""

    decided: list[tuple[D, Routed[Consumer[Any]], Decision]]
    superseded: list[D]
    failed: list[D]


def read_chains(conn: Any, todo: Sequence[tuple[D, Routed[Consumer[Any]], str]],
                ids: Sequence[str | None]) -> dict[tuple[str, str], ChainPos | None]:
    """The retry chain rows, by (handler, message id), of todo's retry copies and replays (ids, each copy's
    Consumer.lookup_id), read at once (dedup.chain_rows); none when the read failed, which is logged: those
    copies run, and dedup.advance decides again if they fail."""
    keys: dict[str, list[tuple[str, str]]] = {}  # per paramstyle
    for (_, r, _), m in zip(todo, ids, strict=True):
        if m is not None:
            keys.setdefault(r.target.paramstyle, []).append((r.target.handler_name, m))
    rows: dict[tuple[str, str], ChainPos | None] = {}
    try:
        for style, ks in keys.items():
            rows.update(zip(ks, chain_rows(conn, ks, style), strict=True))
    except Exception as e:  # the database's failure; the chain is advanced before a copy goes on
        log.warning("msgcontract: retry chain look-up of %d copies failed; running their handlers: %s",
                    sum(map(len, keys.values())), e)
        return {}
    return rows


def run_routed(conn: Any, todo: list[tuple[D, Routed[Consumer[Any]], str]]) -> RoutedRun[D]:
    """The database part of a broker loop's routed deliveries, (delivery, routed, delivery id) each, as
    runtime-go's consumer runs a fetch: the retry copies and replays are looked up in their retry chains first,
    in one read committed on its own (read_chains), and a superseded one is settled as a duplicate; then one
    delivery alone runs in a transaction of its own (Consumer.process), several in one shared transaction
    (process_batch). A failed transaction is rolled back and all its deliveries fail; the failures whose chains
    could not be advanced fail. The RabbitMQ and RocketMQ loops share it."""
    out: RoutedRun[D] = RoutedRun([], [], [])
    run: list[tuple[D, Routed[Consumer[Any]], str]] = []
    ids = [r.target.lookup_id(r.body, r.env) for _, r, _ in todo]
    rows = read_chains(conn, todo, ids)
    for (d, r, did), m in zip(todo, ids, strict=True):
        if m is not None and r.target.settle_superseded(r.body, did, r.env, rows.get((r.target.handler_name, m))):
            out.superseded.append(d)
        else:
            run.append((d, r, did))
    if not run:
        return out
    decisions: list[Decision | None] = []
    try:
        if len(run) == 1:
            _, r, did = run[0]
            decisions.append(r.target.process(conn, r.body, did))
        else:
            decisions = process_batch(conn, [(r.target, r.body, did) for _, r, did in run])
    except Exception as e:  # the database failed: not the messages' fault, no retry counted
        try:
            conn.rollback()
        except Exception as r_err:  # the first failure is the one to report
            log.debug("msgcontract: rollback after a failed transaction: %s", r_err)
        log.error("msgcontract: database failure, %d message(s) handed back: %s", len(run), e)
        out.failed.extend(d for d, _, _ in run)
        return out
    for (d, r, _), dec in zip(run, decisions, strict=True):
        if dec is None:  # its retry chain could not be advanced
            out.failed.append(d)
        else:
            out.decided.append((d, r, dec))
    return out
