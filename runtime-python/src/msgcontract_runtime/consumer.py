"""The transport-neutral consumer skeleton and the decisions it returns."""

from __future__ import annotations

import dataclasses
import math
import random as _random
import time
from typing import Any, Callable, Generic, Optional, Union

from msgcontract.v1 import envelope_pb2 as _envelope_pb2
from msgcontract_runtime.classify import ContractError
from msgcontract_runtime import payload_hash
from msgcontract_runtime.dedup import claim
from msgcontract_runtime.envelope import decode, payload
from msgcontract_runtime.event import DecodeError, EventContract, M

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


Decision = Union[Ack, Defer, Retry, DeadLetter]
"""What the transport must do with a delivery; the caller publishes it."""

CODE_DECODE = -3
"""The code of a message that did not decode, as in the Go runtime."""

MAX_ERROR_MESSAGE = 512
"""The largest last_error message kept, in bytes, as in the Go runtime."""


@dataclasses.dataclass(frozen=True)
class Outcome:
    """One delivery's outcome, as an observer sees it (docs/DESIGN.md, "Observability").

    handler and event_type are "" and envelope None when the envelope did not
    decode (as in Go, where routing needs it);
    handler_seconds is NaN when the handler did not run.
    """

    handler: str
    topic: str
    event_type: str
    envelope: Optional[_envelope_pb2.Envelope]
    decision: Decision
    handler_seconds: float

    @property
    def label(self) -> Optional[str]:
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


def _truncate(s: str) -> str:
    b = s.encode("utf-8")
    if len(b) <= MAX_ERROR_MESSAGE:
        return s
    return b[:MAX_ERROR_MESSAGE].decode("utf-8", errors="ignore")


class Consumer(Generic[M]):
    """The Go runtime's consume protocol on a DB-API connection, transport-neutral.

    Per delivery: decode (a failure is dead-lettered, never retried); defer
    when not_before is in the future; claim (biz_key, handler) in the
    connection's transaction (a duplicate is acknowledged without running the
    handler); run the handler in that transaction and commit; on failure roll
    back (the claim with it), classify, and retry with backoff or dead-letter.
    """

    def __init__(
        self,
        spec: EventContract[M],
        handler_name: str,
        handler: Callable[[Any, M, _envelope_pb2.Envelope], None],
        clock_ms: Callable[[], int] = lambda: int(time.time() * 1000),
        rand: Callable[[], float] = _random.random,
        paramstyle: str = "qmark",
        observer: Optional[Observer] = None,
    ) -> None:
        self.spec = spec
        self.handler_name = handler_name
        self.handler = handler
        self.clock_ms = clock_ms
        self.rand = rand
        self.paramstyle = paramstyle
        self.observer = observer

    def process(self, conn: Any, body: bytes) -> Decision:
        """Processes one delivered body; the consumer commits or rolls back conn.

        A database error propagates: the message is not at fault and the
        caller hands the delivery back without counting a retry. The
        observer, if any, is told every decision but Defer.
        """
        run: dict[str, Any] = {"env": None, "seconds": math.nan}
        d = self._decide(conn, body, run)
        if self.observer is not None and not isinstance(d, Defer):
            env = run["env"]
            # An envelope that did not decode belongs to no handler, as in Go.
            self.observer(Outcome(
                self.handler_name if env is not None else "", self.spec.topic,
                env.event_type if env is not None else "", env, d, run["seconds"],
            ))
        return d

    def _decide(self, conn: Any, body: bytes, run: dict[str, Any]) -> Decision:
        try:
            env = decode(body)
            run["env"] = env
            message = payload(self.spec, env)
        except DecodeError as e:
            return DeadLetter("decode", CODE_DECODE, _truncate(str(e)), 0)
        now = self.clock_ms()
        if env.not_before > now:
            return Defer(env.not_before)
        try:
            claimed = claim(
                conn, env.biz_key, self.handler_name, env.message_id,
                payload_hash.of(message), now, self.paramstyle,
            )
        except Exception:
            conn.rollback()
            raise
        if not claimed:
            conn.rollback()
            return Ack(deduplicated=True)
        start = time.perf_counter()
        try:
            self.handler(conn, message, env)
        except Exception as e:  # handlers may fail in any way; every failure is classified
            run["seconds"] = time.perf_counter() - start
            conn.rollback()
            return self._fail(env, e, now)
        run["seconds"] = time.perf_counter() - start
        # A failed commit is the database's failure, not the message's: it
        # propagates and the delivery is handed back uncounted.
        conn.commit()
        return Ack()

    def _fail(self, env: _envelope_pb2.Envelope, err: Exception, now: int) -> Decision:
        c = self.spec.rules.classify_error(err)
        code = err.code if isinstance(err, ContractError) else 0
        msg = _truncate(str(err))
        n = env.retry_count + 1
        if c.retryable and not self.spec.retry.dead_letter(n):
            delay = self.spec.retry.delay_ms(n, self.rand())
            nxt = _envelope_pb2.Envelope()
            nxt.CopyFrom(env)
            nxt.retry_count = n
            nxt.not_before = now + delay
            nxt.last_error.CopyFrom(
                _envelope_pb2.LastError(
                    code=code, message=msg, retryable=c.retryable, range=c.range_name, failed_at=now
                )
            )
            if env.first_failed_at == 0:
                nxt.first_failed_at = now
            return Retry(nxt, delay)
        reason = "retries_exhausted" if c.retryable else "non_retryable"
        return DeadLetter(reason, code, msg, n)
