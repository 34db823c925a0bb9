"""RocketMQ 5.x for Python services, on RocketMQ's Python client through the proxy
(``pip install msgcontract-runtime[rocketmq]``).

docs/rocketmq.md is the design, defined by runtime-go/transport/rocketmq; this
module names the same topics, sets the same message properties and follows
the same consuming rules as the Go transport and the Java member
(runtime-java/rocketmq), so services in all three languages share topics,
retry copies and dead-letter records:

- the body of an event is the envelope; the user property MSGCONTRACT_TOPIC
  names its msgcontract topic; the keys are its biz_key and message_id; the
  tag is its event type;
- RocketMQConsumerLoop receives from the topic of every consumer's topic and
  from the group's retry topic ``<group>_retry``, a SimpleConsumer of the
  group per topic, runs up to batch_size deliveries in one business
  transaction and acknowledges them only after the commit; a retry copy goes
  to the retry topic as a timer message due timer_lead_ms before its
  not_before and is held from its arrival until then; a dead letter goes to
  ``msgcontract_dlq`` as a JSON dlq.Record, which ``msgcontract dlq
  --rocketmq`` lists, shows and replays;
- RocketMQPublisher is the producer and the outbox relay's publisher
  (``outbox.Relay(conn, RocketMQPublisher(...))``); to a FIFO topic
  (Config.fifo_topics) an event carries its biz_key as its message group;
- a FIFO loop (its group in Config.fifo_groups, an orderly consumer group)
  hands a biz_key's deliveries to the handlers one at a time,
  in the order they came, while other keys go on; a retry copy leaves the line;
- RocketMQTxProducer is the outbox's alternative: it sends an event as a
  transactional (half) message committed with the business transaction, and
  answers the broker's check-backs from the business database (txcheck).

RocketMQ's Python client takes delivery times and invisible durations in
whole seconds (a timer copy comes up to a second earlier than the lead, and
the hold covers it), cannot create topics (they must exist: docs/rocketmq.md,
"Names"), and on import writes its log under ``~/logs/rocketmq_python``.
"""

from __future__ import annotations

import collections
import concurrent.futures
import contextlib
import dataclasses
import hashlib
import heapq
import json
import logging
import queue
import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from rocketmq import (
    ClientConfiguration,
    Credentials,
    FilterExpression,
    Message,
    Producer,
    SimpleConsumer,
    TransactionChecker,
    TransactionResolution,
)

from msgcontract.v1 import envelope_pb2 as _envelope_pb2
from msgcontract_runtime import txcheck
from msgcontract_runtime.consumer import (
    Ack,
    Consumer,
    DeadLetter,
    Decision,
    Defer,
    Refused,
    Retry,
    Routed,
    RoutedRun,
    route_envelope,
    run_routed,
)
from msgcontract_runtime.dlqrecord import dead_letter_record
from msgcontract_runtime.envelope import decode, encode
from msgcontract_runtime.event import DecodeError
from msgcontract_runtime.outbox import inject_trace, placeholder

log = logging.getLogger("msgcontract.rocketmq")

PROP_TOPIC = "MSGCONTRACT_TOPIC"
PROP_NOT_BEFORE = "MSGCONTRACT_NOT_BEFORE"
PROP_ATTEMPT = "MSGCONTRACT_ATTEMPT"
RETRY_SUFFIX = "_retry"
_SETTLE = ""  # the inbox's tag of an ended send (no topic is named "")
DLQ_TOPIC = "msgcontract_dlq"
MIN_LEASE_S = 10  # the proxy's shortest invisible duration
STARTUP_S = 10  # a receive failing this soon after start is logged at INFO (the proxy syncing the client's settings)
MAX_TIMER_MS = 72 * 3600 * 1000 - 60_000  # RocketMQ's timerMaxDelaySec defaults to three days
MIN_UNRESOLVED_MS = 4000
"""RocketMQTxProducer's shortest unresolved window: the client stamps a half message's born time in whole
seconds, so a check-back may take it for up to a second older, and half the window must exceed that second with
room for the business commit."""
PRUNE_INTERVAL_S = 3600  # how often a RocketMQTxProducer prunes the check-back table (runtime-go's: hourly)
MAX_GROUP_BYTES = 63  # the proxy refuses a message group of 64 bytes or more (maxMessageGroupSize)

T = TypeVar("T")


class RocketMQError(Exception):
    """A RocketMQ request that failed: the proxy unreachable, a topic missing, a send refused."""


class ConfigError(ValueError):
    """A Config that cannot work; the message names every problem."""


def sanitize(s: str) -> str:
    """s with every character outside [A-Za-z0-9_-] replaced by '_' (runtime-go's sanitize, one per character)."""
    return "".join(c if c.isascii() and (c.isalnum() or c in "_-") else "_" for c in s)


def _now_ms() -> int:
    return int(time.time() * 1000)


@dataclasses.dataclass
class Config:
    """The proxy, the namespace and the loop's settings; the names and defaults of runtime-go's rocketmq.Config
    and Java's RocketConfig."""

    endpoints: str
    """The proxy's gRPC endpoint, host:port (several: "host1:port;host2:port")."""
    namespace: str = ""
    """Prepended to every topic and group name."""
    lease_s: int = 60
    """The receive's invisible duration: the loop settles a delivery within it or lets it come again; >= 10."""
    timer_lead_ms: int = 1000
    """How long before its not_before a copy is due on the broker's timer; the loop holds it from then."""
    await_s: int = 5
    """How long one receive long-polls (the proxy raises it to its minimum, 5 s by default)."""
    request_timeout_s: int = 10
    """Bound of one send and of the client's other requests."""
    batch_size: int = 32
    """Deliveries that share one business transaction at most, and how many one receive asks for (1..32)."""
    max_in_flight: int = 256
    """Deliveries the loop holds before it asks for more; each topic's receive may bring batch_size beyond."""
    db_retry_ms: int = 500
    """How long a delivery whose database or send failed waits before it runs again."""
    access_key: str = ""
    secret_key: str = ""
    fifo_topics: Sequence[str] = ()
    """The msgcontract topics whose RocketMQ topics are FIFO topics (message type FIFO, which runtime-go's
    Config.FIFOTopics creates): an event sent to one carries a message group (message_group), which the proxy
    requires there, and a RocketMQTxProducer cannot send to one."""
    fifo_groups: Sequence[str] = ()
    """The consumer groups that keep a biz_key's order (orderly groups, which runtime-go's Config.FIFOGroups
    creates with their retry topics' groups): a RocketMQConsumerLoop of one is a FIFO loop."""

    def validate(self) -> None:
        errs = []
        for field, names in (("fifo_topics", self.fifo_topics), ("fifo_groups", self.fifo_groups)):
            if isinstance(names, str) or not all(isinstance(n, str) and n for n in names):
                errs.append(f"rocketmq: {field} {names!r} must be a sequence of names, none empty (a single one "
                            f"too: {field}=[\"orders\"])")
        if not self.endpoints.strip():
            errs.append("rocketmq: endpoints is required (the proxy's gRPC address, host:8081)")
        if sanitize(self.namespace) != self.namespace:
            errs.append(f'rocketmq: namespace "{self.namespace}" has characters other than letters, digits, '
                        "'_' and '-'")
        if self.lease_s < MIN_LEASE_S:
            errs.append(f"rocketmq: lease_s {self.lease_s} is under {MIN_LEASE_S} (the proxy's shortest invisible "
                        "duration)")
        if not 1 <= self.batch_size <= 32:
            errs.append(f"rocketmq: batch_size {self.batch_size} is outside 1..32 (a receive returns at most 32)")
        if self.max_in_flight < self.batch_size:
            errs.append(f"rocketmq: max_in_flight {self.max_in_flight} is under batch_size {self.batch_size}")
        for name in ("timer_lead_ms", "await_s", "request_timeout_s", "db_retry_ms"):
            if getattr(self, name) <= 0:
                errs.append(f"rocketmq: {name} {getattr(self, name)} must be positive")
        if self.lease_s >= MIN_LEASE_S and 2 * self.timer_lead_ms + 1000 >= self.lease_s * 1000:
            errs.append(f"rocketmq: timer_lead_ms {self.timer_lead_ms} leaves no room in lease_s {self.lease_s} "
                        "(a copy may be held up to 2 x the lead + 1 s)")
        if errs:
            raise ConfigError("; ".join(errs))

    def topic_name(self, topic: str) -> str:
        return self.namespace + sanitize(topic)

    def is_fifo(self, topic: str) -> bool:
        """Whether msgcontract topic topic is one of fifo_topics."""
        return not isinstance(self.fifo_topics, str) and topic in self.fifo_topics

    def is_fifo_group(self, group: str) -> bool:
        """Whether consumer group group is one of fifo_groups."""
        return not isinstance(self.fifo_groups, str) and group in self.fifo_groups

    def retry_topic(self, group: str) -> str:
        return self.namespace + sanitize(group) + RETRY_SUFFIX

    def group_name(self, group: str) -> str:
        return self.namespace + sanitize(group)

    def dlq_topic(self) -> str:
        return self.namespace + DLQ_TOPIC

    def topic_of(self, name: str) -> str:
        """The msgcontract topic of a message without MSGCONTRACT_TOPIC: its topic without the namespace."""
        return name[len(self.namespace):] if len(name) > len(self.namespace) and name.startswith(self.namespace) \
            else name

    def client(self) -> Any:
        return ClientConfiguration(self.endpoints, Credentials(self.access_key, self.secret_key),
                                   request_timeout=self.request_timeout_s)


def _failure(e: BaseException, what: str, name: str) -> RocketMQError:
    hint = ""
    if "No topic route" in str(e) or "TOPIC_NOT_FOUND" in str(e):
        hint = (" (the topic does not exist: RocketMQ's Python client cannot create topics; create it with mqadmin "
                "updateTopic, retry topics with -a +message.type=DELAY, or let a runtime-go member create it)")
    elif "message type not match" in str(e):
        hint = (" (the topic's message type refuses this message: a RocketMQTxProducer needs a TRANSACTION topic, "
                "RocketMQPublisher a NORMAL one, or a FIFO one for a topic in Config.fifo_topics; runtime-go's "
                "Config.TransactionTopics and FIFOTopics create them so, mqadmin updateTopic -a "
                "+message.type=TRANSACTION (or FIFO) sets one)")
    return RocketMQError(f"rocketmq: {what} to {name}: {e!r}{hint}")


def _start_producer(cfg: Config, topics: Sequence[str] = (), checker: Any = None) -> Any:
    """A started client Producer of cfg's proxy, declaring the RocketMQ topics topics (a transactional
    producer's check-backs come for them) and answering check-backs with checker."""
    p = Producer(cfg.client(), list(topics) or None, checker)
    try:
        p.startup()
    except Exception as e:
        raise RocketMQError(f"rocketmq: start a producer on the proxy {cfg.endpoints}: {e!r} (is the proxy "
                            "running, and is endpoints its gRPC port?)") from e
    return p


def _message(name: str, topic: str, env: _envelope_pb2.Envelope, body: bytes, not_before_ms: int) -> Any:
    """The RocketMQ message of an envelope (body, env's bytes) for RocketMQ topic name: MSGCONTRACT_TOPIC topic,
    the keys biz_key and message_id, the tag the event type, and MSGCONTRACT_NOT_BEFORE when not_before_ms > 0."""
    m = Message()
    m.topic = name
    m.body = body
    m.add_property(PROP_TOPIC, topic)
    for k in (env.biz_key, env.message_id):
        if k.strip():
            m.keys = k  # the client's setter adds one key a call
    if env.event_type:
        m.tag = env.event_type
    if not_before_ms > 0:
        m.add_property(PROP_NOT_BEFORE, str(not_before_ms))
    return m


def message_group(env: _envelope_pb2.Envelope) -> str:
    """The message group of env on a FIFO topic: its biz_key (its message id when the biz_key is empty), or,
    when the proxy would refuse that (blank, over MAX_GROUP_BYTES, control characters), "sha256:" and the start
    of its SHA-256 in hex: one key, one group, so one queue and one line."""
    key = env.biz_key or env.message_id
    if not key:
        raise ValueError("rocketmq: the envelope has neither biz_key nor message id: a FIFO topic's message needs "
                         "a message group; build it with new_envelope")
    control = any(c < " " or "\x7f" <= c <= "\x9f" for c in key)
    if key.strip() and len(key.encode()) <= MAX_GROUP_BYTES and not control:
        return key
    return "sha256:" + hashlib.sha256(key.encode()).hexdigest()[:MAX_GROUP_BYTES - len("sha256:")]


def _event_message(cfg: Config, topic: str, env: _envelope_pb2.Envelope) -> Any:
    """The RocketMQ message that publishes env to msgcontract topic topic; to a FIFO topic, in env's message
    group."""
    m = _message(cfg.topic_name(topic), topic, env, encode(env), 0)
    if cfg.is_fifo(topic):
        m.message_group = message_group(env)
    return m


class RocketMQPublisher:
    """Sends envelopes as runtime-go's rocketmq transport does; the outbox relay's Publisher. One thread at a
    time."""

    def __init__(self, cfg: Config | str, clock_ms: Callable[[], int] = _now_ms) -> None:
        self.cfg = Config(cfg) if isinstance(cfg, str) else cfg
        self.cfg.validate()
        self.clock_ms = clock_ms
        self._producer = _start_producer(self.cfg)

    def publish(self, topic: str, env: _envelope_pb2.Envelope) -> None:
        """Sends env to msgcontract topic topic and waits for the broker."""
        self._send(_event_message(self.cfg, topic, env))

    def publish_raw(self, topic: str, body: bytes) -> None:
        """Sends body as it is to msgcontract topic topic's RocketMQ topic (what a foreign producer sends)."""
        m = Message()
        m.topic = self.cfg.topic_name(topic)
        m.body = body
        self._send(m)

    def publish_copy(self, group: str, topic: str, env: _envelope_pb2.Envelope, body: bytes,
                     not_before_ms: int) -> concurrent.futures.Future[Any]:
        """Sends body (env's bytes) to group's retry topic, keeping its msgcontract topic, not to be handled
        before not_before_ms (0: at once): a timer message due timer_lead_ms before then, in whole seconds
        (earlier, never later), or now when that has passed (a retry topic is a DELAY topic). The future ends
        when the broker has it."""
        now = self.clock_ms()
        at = min(max(not_before_ms - self.cfg.timer_lead_ms, now), now + MAX_TIMER_MS) if not_before_ms > 0 else now
        m = _message(self.cfg.retry_topic(group), topic, env, body, not_before_ms)
        m.delivery_timestamp = at // 1000
        return self._send_async(m)

    def store_record(self, rec: dict[str, Any]) -> concurrent.futures.Future[Any]:
        """Appends a dead-letter record (without id and replay state) to the dead-letter topic. The future ends
        when the broker has it."""
        bare = {k: v for k, v in rec.items() if k not in ("id", "last_replayed_at")}
        bare["replay_count"] = 0
        m = Message()
        m.topic = self.cfg.dlq_topic()
        m.body = json.dumps(bare, separators=(",", ":")).encode()
        m.add_property(PROP_TOPIC, str(rec.get("topic") or "_"))
        for k in (rec.get("biz_key"), rec.get("message_id")):
            if isinstance(k, str) and k.strip():
                m.keys = k  # the client's setter adds one key a call
        return self._send_async(m)

    def _send(self, m: Any) -> None:
        try:
            self._producer.send(m)
        except Exception as e:
            raise _failure(e, "send", str(m.topic)) from e

    def _send_async(self, m: Any) -> concurrent.futures.Future[Any]:
        try:
            f: concurrent.futures.Future[Any] = self._producer.send_async(m)
            return f
        except Exception as e:  # refused before it was sent: a failed future, as a failed send
            failed: concurrent.futures.Future[Any] = concurrent.futures.Future()
            failed.set_exception(_failure(e, "send", str(m.topic)))
            return failed

    def close(self) -> None:
        _stop_producer(self._producer)


def _stop_producer(p: Any) -> None:
    try:
        p.shutdown()
    except Exception as e:  # nothing is pending after the awaited sends
        log.debug("msgcontract: rocketmq: producer shutdown: %r", e)


_RESOLUTIONS = {
    txcheck.Answer.COMMIT: TransactionResolution.COMMIT,
    txcheck.Answer.ROLLBACK: TransactionResolution.ROLLBACK,
    # The proxy leaves the half message pending and checks it back again.
    txcheck.Answer.UNKNOWN: TransactionResolution.TRANSACTION_RESOLUTION_UNSPECIFIED,
}


class _Checker(TransactionChecker):  # type: ignore[misc]  # the client is untyped: its base class is Any to mypy
    """The client's view of a RocketMQTxProducer: it calls check on its own thread for each check-back."""

    def __init__(self, check: Callable[[Any], Any]) -> None:
        self._check = check

    def check(self, message: Any) -> Any:
        return self._check(message)


class RocketMQTxProducer:
    """Sends events as RocketMQ transactional (half) messages, the outbox's alternative on RocketMQ, as
    runtime-go's rocketmq.TxProducer: the broker keeps a half message from consumers until the producer commits
    it, which send does exactly when the business transaction commits; a verdict lost to a crash is asked for
    again by the broker's check-back, which a producer of the same topic answers from the business database's
    msg_tx_check (txcheck has the rule; migrate it first with txcheck.migrate).

    cfg is the proxy (a str: its endpoints). topics are the msgcontract topics it sends to, each a TRANSACTION
    topic (the proxy refuses a transactional message to a NORMAL one: runtime-go's Config.TransactionTopics
    creates them so). The producer declares them when it starts, and the proxy sends a check-back to any live
    producer of the message's topic: every producer of a topic must answer from the same business database.
    conn is that database's DB-API connection, which send runs the business transaction on and commits, one
    thread at a time; connect opens another connection to it, called on the client's thread for each check-back
    and by send to prune the table at most once an hour (txcheck.prune), each closed after use. paramstyle is the
    drivers' ("format" for psycopg, PyMySQL and mysqlclient). unresolved_ms is how long after a half message is
    stored a check-back that finds no row still answers UNKNOWN; send commits the business transaction only within
    half of it.

    Against the outbox: no relay and no outbox table to drain, and the event leaves at once; but the proxy must
    be up for the business transaction to start, the half message is a broker round trip inside the request,
    and a producer of the topic must be running for a lost verdict to be resolved.
    """

    def __init__(self, cfg: Config | str, topics: Sequence[str], conn: Any, connect: Callable[[], Any],
                 paramstyle: str = "qmark", unresolved_ms: int = txcheck.DEFAULT_UNRESOLVED_MS,
                 clock_ms: Callable[[], int] = _now_ms) -> None:
        self.cfg = Config(cfg) if isinstance(cfg, str) else cfg
        self.cfg.validate()
        errs = []
        if not topics or not all(topics):
            errs.append(f"rocketmq: topics {list(topics)} must name the msgcontract topics the producer sends to, "
                        "none empty (the proxy sends a check-back to a producer of the message's topic)")
        if conn is None:
            errs.append("rocketmq: conn is required: the business database's connection send runs the business "
                        "transaction on")
        if not callable(connect):
            errs.append("rocketmq: connect must be a function that opens a connection to the business database "
                        "(for the check-backs, on the client's thread)")
        try:
            placeholder(paramstyle)
        except ValueError as e:
            errs.append(f"rocketmq: {e}")
        fifo = [t for t in topics if self.cfg.is_fifo(t)]
        if fifo:
            errs.append(f"rocketmq: topics {fifo} are FIFO topics (Config.fifo_topics), which take no transactional "
                        "messages (a RocketMQ topic has one message type): publish their events through the outbox "
                        "and RocketMQPublisher, or send to a TRANSACTION topic")
        if unresolved_ms < MIN_UNRESOLVED_MS:
            errs.append(f"rocketmq: unresolved_ms {unresolved_ms} is under {MIN_UNRESOLVED_MS} (the client stamps a "
                        "half message's born time in whole seconds; half the window must exceed one second)")
        if errs:
            raise ConfigError("; ".join(errs))
        self.topics = tuple(topics)
        self.conn = conn
        self.unresolved_ms = unresolved_ms
        self.clock_ms = clock_ms
        self._connect = connect
        self._paramstyle = paramstyle
        # Set by tests: no verdict after the business transaction commits or rolls back, as a process that dies
        # then (the check-back decides); and a queue that receives every check-back's answer.
        self._crash = False
        self._checked: queue.Queue[txcheck.Answer] | None = None
        self._closed = False
        self._last_prune_ms: int | None = None
        self._producer = _start_producer(self.cfg, [self.cfg.topic_name(t) for t in self.topics],
                                         _Checker(self._check))

    def send(self, topic: str, env: _envelope_pb2.Envelope, work: Callable[[Any], None]) -> None:
        """Stores env as a half message on msgcontract topic topic, runs work(conn) (the business change) and
        records the message (txcheck.record) in conn's transaction, and commits the message on the broker when
        that transaction commits. env gets the current span's trace context as outbox.write's does.

        It raises work's exception after rolling both back; an error before work runs (the broker refused the half
        message) and one after it (the record failed, or the transaction ran past half the unresolved window:
        RocketMQError) leave no effect either. The one uncertain outcome is a business commit that fails without
        saying whether it happened: send raises RocketMQError and the check-back decides from the table. A commit
        of the half message that does not reach the broker is logged: the check-back commits it.
        """
        if topic not in self.topics:
            raise ValueError(f"rocketmq: topic {topic!r} is not one of the producer's topics {list(self.topics)}: "
                             "the check-backs of its messages would not reach a producer started again; add it")
        if not env.message_id:
            raise ValueError(f"rocketmq: the envelope for {topic} has no message id; build it with new_envelope")
        inject_trace(env)
        m = _event_message(self.cfg, topic, env)
        self._prune_if_due()
        stored = self.clock_ms()  # just before the half message goes: the deadline counts from here
        try:
            tx = self._producer.begin_transaction()
            self._producer.send(m, tx)
        except Exception as e:
            raise RocketMQError(f"{_failure(e, 'send the half message', str(m.topic))}; the business transaction "
                                "did not run") from e
        try:
            work(self.conn)
            txcheck.record(self.conn, env.message_id, topic, self.clock_ms(), self._paramstyle)
            if self.clock_ms() >= txcheck.deadline(stored, self.unresolved_ms):
                raise RocketMQError(f"rocketmq: the business transaction of {env.message_id} ran past half the "
                                    f"unresolved window ({self.unresolved_ms} ms); rolled back, with the half "
                                    "message: send it again, or raise unresolved_ms")
        except BaseException:
            self._roll_back(tx, env.message_id)
            raise
        try:
            self.conn.commit()
        except Exception as e:
            raise RocketMQError(f"rocketmq: commit the business transaction of {env.message_id}: {e!r}; the half "
                                "message is left to the broker's check-back, which delivers it if the commit "
                                "happened and discards it otherwise") from e
        if self._crash:
            return
        try:
            tx.commit()
        except Exception as e:  # the business change is in: the check-back finds its row and commits
            log.warning("msgcontract: rocketmq: the commit of half message %s did not reach the broker; its "
                        "check-back commits it: %r", env.message_id, e)

    def _roll_back(self, tx: Any, message_id: str) -> None:
        """Rolls back the business transaction, then the half message (unless a crash is simulated)."""
        try:
            self.conn.rollback()
        except Exception as e:  # never committed, whatever the connection's state: the half message goes too
            log.warning("msgcontract: rocketmq: rollback of the business transaction of %s failed: %r",
                        message_id, e)
        if self._crash:
            return
        try:
            tx.rollback()
        except Exception as e:  # no row: the check-back rolls it back once the window has passed
            log.warning("msgcontract: rocketmq: the rollback of half message %s did not reach the broker; its "
                        "check-back rolls it back after %d ms: %r", message_id, self.unresolved_ms, e)

    def _check(self, m: Any) -> Any:
        """Answers a check-back, on the client's thread, from the table (txcheck.check on a connection of its
        own): COMMIT, ROLLBACK, or UNKNOWN (the proxy asks again), which also answers a failed connect."""
        try:
            message_id = decode(bytes(m.body or b"")).message_id
        except DecodeError:
            message_id = ""  # not an envelope of ours: nothing will ever record it
        try:
            answer = self._on_own_conn(lambda c: txcheck.check(c, message_id, int(m.born_timestamp or 0),
                                                               self.clock_ms(), self.unresolved_ms,
                                                               self._paramstyle))
        except Exception as e:  # connect failed (check itself answers a database error with UNKNOWN)
            log.error("msgcontract: rocketmq: check-back of %s: connect to the business database failed; answering "
                      "UNKNOWN, the broker asks again: %r", message_id, e)
            answer = txcheck.Answer.UNKNOWN
        log.debug("msgcontract: rocketmq: check-back of %s: %s", message_id, answer.value)
        if self._checked is not None:
            self._checked.put(answer)
        return _RESOLUTIONS[answer]

    def _prune_if_due(self) -> None:
        """Deletes the table's rows past txcheck.RETENTION_MS, at most once every PRUNE_INTERVAL_S."""
        now = self.clock_ms()
        if self._last_prune_ms is not None and now - self._last_prune_ms < PRUNE_INTERVAL_S * 1000:
            return
        self._last_prune_ms = now
        try:
            self._on_own_conn(lambda c: txcheck.prune(c, now, self._paramstyle))
        except Exception as e:  # the database: the next prune tries again
            log.warning("msgcontract: rocketmq: prune of %s failed; trying again in %d s: %r", txcheck.TABLE,
                        PRUNE_INTERVAL_S, e)

    def _on_own_conn(self, fn: Callable[[Any], T]) -> T:
        """fn on a new connection from connect, closed afterwards."""
        conn = self._connect()
        try:
            return fn(conn)
        finally:
            with contextlib.suppress(Exception):  # broken already: nothing to give back
                conn.close()

    def close(self) -> None:
        """Stops the producer; a half message whose verdict was lost is then resolved by another producer of its
        topic, or by this one started again. Idempotent."""
        if self._closed:
            return
        self._closed = True
        _stop_producer(self._producer)


@dataclasses.dataclass
class Counts:
    processed: int = 0
    deduped: int = 0
    retried: int = 0
    dead_lettered: int = 0
    handed_back: int = 0
    deferred: int = 0
    expired: int = 0


@dataclasses.dataclass
class Delivery:
    """A received message this member holds unsettled."""

    consumer: Any  # the SimpleConsumer it came from, which acknowledges it
    msg: Any
    topic: str  # its msgcontract topic
    body: bytes
    message_id: str
    attempt: int
    not_before: int
    received: float  # time.monotonic() when it arrived (its lease)
    key: str = ""  # in a FIFO loop, the biz_key whose line it is in; "" for none


class RocketMQConsumerLoop:
    """A member of group on RocketMQ running msgcontract Consumers, as runtime-go's consumer on
    rocketmq.Transport, making the decisions RabbitMQConsumerLoop makes (consumer.py).

    consumers are the generated handlers' Consumer objects; conn is the business database's DB-API
    connection. Up to cfg.batch_size due deliveries share one transaction, each in a savepoint, and are
    acknowledged after its commit; one alone, or batch_size 1, has a transaction of its own. A failed
    transaction, send or acknowledgement leaves them held for db_retry_ms, or, past their lease, to come again
    from the broker. Each message keeps one retry chain keyed by its message id (msg_dedup_chain).
    A group is consumed by members of one kind: 5.x-client members (Java, Python) or Go members.

    A group in cfg.fifo_groups keeps each biz_key's order (docs/rocketmq.md, FIFO groups), for a group created
    orderly with its companion (runtime-go's Config.FIFOGroups, rocketmqpeer topics -fifo-group): the event
    topics are read as
    group, whose broker hands out a queue's messages in order and no more of the queue until they are
    acknowledged, and the retry topic as the non-orderly group named like it (cfg.retry_topic(group)), so that a
    copy held until its not_before does not stop the copies behind it. The loop hands a key's deliveries of the
    event topics to the handlers one at a time in the order they came: the next once the one before is settled
    (acknowledged, or its retry copy or dead letter stored), while other keys go on. A delivery let go unsettled
    (its lease) leaves the line as a retry copy does, as in Go and Java: it comes again, after the key's next.
    """

    def __init__(self, cfg: Config | str, group: str, consumers: Sequence[Consumer[Any]], conn: Any,
                 clock_ms: Callable[[], int] = _now_ms) -> None:
        self.cfg = Config(cfg) if isinstance(cfg, str) else cfg
        self.cfg.validate()
        if not group:
            raise ConfigError("rocketmq: group is empty")
        if not consumers:
            raise ConfigError("rocketmq: no consumer given")
        self.group = group
        self.conn = conn
        self.clock_ms = clock_ms
        self.fifo = self.cfg.is_fifo_group(group)
        self.counts = Counts()
        self._routes = {(c.spec.topic, c.spec.event_type): c for c in consumers}
        if len(self._routes) != len(consumers):
            raise ConfigError("rocketmq: two consumers of one topic and event type")
        names = [self.cfg.topic_name(t) for t in sorted({c.spec.topic for c in consumers})]
        self._retry_name = self.cfg.retry_topic(group)
        names.append(self._retry_name)
        self._pub = RocketMQPublisher(self.cfg, clock_ms)
        # (topic name, its receive) or (SETTLE, (delivery, its send, what)): futures that ended, for this thread
        self._inbox: queue.Queue[tuple[str, Any]] = queue.Queue()
        self._held: list[tuple[int, int, Delivery]] = []  # (due ms, seq, delivery)
        self._seq = 0
        self._receiving: set[str] = set()
        self._receive_at = 0
        # fifo: per biz_key, its delivery out (held, running or being settled), then those waiting, in arrival order
        self._lines: dict[str, collections.deque[Delivery]] = {}
        self._closed = False
        self._started = time.monotonic()
        # One consumer of the group per topic: a receive on an empty topic long-polls for the proxy's minimum,
        # and one consumer of every topic would leave a busy topic waiting behind the idle retry topic.
        self._consumers: dict[str, Any] = {}
        try:
            for n in names:
                as_group = n if self.fifo and n == self._retry_name else self.cfg.group_name(group)
                c = SimpleConsumer(self.cfg.client(), as_group, {n: FilterExpression()},
                                   await_duration=self.cfg.await_s)
                c.startup()
                self._consumers[n] = c
        except Exception as e:
            self.close()
            raise _failure(e, f"subscribe group {self.cfg.group_name(group)}", ", ".join(names)) from e

    def run(self, stop: Callable[[], bool], poll_timeout_s: float = 0.2) -> None:
        """Consumes until stop() is true, then closes (what it holds unacknowledged comes again)."""
        try:
            while not stop():
                self.step(poll_timeout_s)
        finally:
            self.close()

    def step(self, poll_timeout_s: float = 0.2) -> None:
        """One turn: ask each topic for more when there is room, wait up to poll_timeout_s for what arrives (or
        until a held delivery is due), run what is due, then take what arrived."""
        now = self.clock_ms()
        if now >= self._receive_at and len(self._held) + self.cfg.batch_size <= self.cfg.max_in_flight:
            for n, c in self._consumers.items():
                if n not in self._receiving:
                    self._receiving.add(n)
                    f = c.receive_async(self.cfg.batch_size, self.cfg.lease_s)
                    f.add_done_callback(lambda fut, n=n: self._inbox.put((n, fut)))
        wait = poll_timeout_s
        if self._held:
            wait = max(0.0, min(wait, (self._held[0][0] - now) / 1000))
        got: list[tuple[str, Any]] = []
        try:
            if wait > 0:
                got.append(self._inbox.get(timeout=wait))
            while True:
                got.append(self._inbox.get_nowait())
        except queue.Empty:
            pass
        self._expire_leases()
        # What is due runs first, every due batch's transaction, then their sends and acknowledgements, then
        # what arrived: when many copies fall due at once, a later batch's handlers wait neither for an earlier
        # batch's copies to be sent nor for the acknowledgements of settled sends, and a copy arrives a timer
        # lead before it is due. What arrived due (a first delivery) runs in the next turn, which does not wait.
        now = self.clock_ms()
        due: list[Delivery] = []
        while self._held and self._held[0][0] <= now:
            due.append(heapq.heappop(self._held)[2])
        runs = [self._run_due(due[i:i + self.cfg.batch_size]) for i in range(0, len(due), self.cfg.batch_size)]
        for res in runs:
            self._carry_out(res)
        for n, item in got:
            if n == _SETTLE:
                self._settle(*item)
                continue
            self._receiving.discard(n)
            self._take(n, item)

    def _take(self, name: str, fut: concurrent.futures.Future[Any]) -> None:
        try:
            msgs = fut.result()
        except Exception as e:
            if not self._closed:
                self._receive_at = self.clock_ms() + self.cfg.db_retry_ms
                # Right after start the proxy may not have the client's settings yet and refuses the first
                # receives: expected, so not a warning.
                level = logging.INFO if time.monotonic() - self._started < STARTUP_S else logging.WARNING
                log.log(level, "msgcontract: rocketmq: receive from %s for group %s failed; trying again in %d ms: %r",
                        name, self.cfg.group_name(self.group), self.cfg.db_retry_ms, e)
            return
        consumer = self._consumers.get(name)
        for m in msgs or []:
            if self._closed or consumer is None:
                return  # unacknowledged: it comes again when its invisible duration ends
            props = dict(m.properties or {})
            attempt = _int(props.get(PROP_ATTEMPT)) or int(m.delivery_attempt or 1)
            d = Delivery(consumer, m, props.get(PROP_TOPIC) or self.cfg.topic_of(str(m.topic)), bytes(m.body or b""),
                         str(m.message_id or ""), attempt, _int(props.get(PROP_NOT_BEFORE)), time.monotonic())
            now = self.clock_ms()
            if d.not_before - now > 2 * self.cfg.timer_lead_ms + 1000:
                # Came early: a timer capped at the broker's longest. Sent on again, due later.
                self._send_on(d, d.not_before)
                continue
            if self._queue_up(d, name):
                self._hold(d, max(now, d.not_before))

    def _hold(self, d: Delivery, until_ms: int) -> None:
        self._seq += 1
        heapq.heappush(self._held, (until_ms, self._seq, d))

    def _queue_up(self, d: Delivery, name: str) -> bool:
        """Whether d is held now: in a FIFO loop a delivery of an event topic joins the line of its biz_key and
        is held once it is at the head. Retry copies, and bodies without an envelope or a biz_key, join no line."""
        if not self.fifo or name == self._retry_name:
            return True
        try:
            d.key = decode(d.body).biz_key
        except DecodeError:
            return True
        if not d.key:
            return True
        line = self._lines.setdefault(d.key, collections.deque())
        line.append(d)
        return len(line) == 1

    def _leave(self, d: Delivery) -> None:
        """d is settled, or let go to come again: it leaves its key's line, and the key's next delivery is held,
        due now."""
        line = self._lines.get(d.key) if d.key else None
        if not line or line[0] is not d:
            return
        line.popleft()
        if line:
            self._hold(line[0], max(self.clock_ms(), line[0].not_before))
        else:
            del self._lines[d.key]

    def _expire_leases(self) -> None:
        """A delivery held longer than its lease is let go: the broker delivers it again when its invisible
        duration ends. It leaves its key's line, as a retry copy does."""
        limit = time.monotonic() - self.cfg.lease_s
        gone = [e[2] for e in self._held if e[2].received < limit]
        if not gone:
            return
        self._held = [e for e in self._held if e[2].received >= limit]
        heapq.heapify(self._held)
        for d in gone:
            self.counts.expired += 1
            log.warning("msgcontract: rocketmq: delivery %s of %s (attempt %d) held longer than its lease (%d s); "
                        "the broker delivers it again", d.message_id, d.msg.topic, d.attempt, self.cfg.lease_s)
            self._leave(d)

    def _retry_later(self, d: Delivery) -> None:
        """Holds d for db_retry_ms, or lets it come again from the broker when its lease would run out."""
        if time.monotonic() - d.received + self.cfg.db_retry_ms / 1000 < self.cfg.lease_s:
            self._hold(d, self.clock_ms() + self.cfg.db_retry_ms)
        else:
            self._leave(d)

    def _ack(self, d: Delivery) -> None:
        try:
            # The client's ack_async hands back no future: an ack that fails (its lease ran out, the proxy is
            # gone) leaves the message to come again, and the claims absorb it.
            d.consumer.ack_async(d.msg)
        except Exception as e:
            log.warning("msgcontract: rocketmq: ack of %s failed; it is delivered again and deduplicated: %r",
                        d.message_id, e)
        self._leave(d)

    def _after(self, d: Delivery, f: concurrent.futures.Future[Any], what: str) -> None:
        """Acknowledges d once f (its copy or dead letter) is stored, on this thread (step); when f failed, d
        runs again after db_retry_ms, unacknowledged."""
        f.add_done_callback(lambda fut: self._inbox.put((_SETTLE, (d, fut, what))))

    def _settle(self, d: Delivery, f: concurrent.futures.Future[Any], what: str) -> None:
        e = f.exception()
        if e is not None:
            log.error("msgcontract: %s of %s failed; it runs again in %d ms: %s", what, d.message_id,
                      self.cfg.db_retry_ms, e if isinstance(e, RocketMQError) else _failure(e, what, d.topic))
            if not self._closed:
                self._retry_later(d)
            return
        if what == "retry":
            self.counts.retried += 1
        elif what == "defer":
            self.counts.deferred += 1
        else:
            self.counts.dead_lettered += 1
        self._ack(d)

    def _send_on(self, d: Delivery, not_before_ms: int) -> None:
        try:
            env = decode(d.body)
        except DecodeError:
            env = _envelope_pb2.Envelope()
        self._after(d, self._pub.publish_copy(self.group, d.topic, env, d.body, not_before_ms), "defer")

    def _run_due(self, ds: list[Delivery]) -> RoutedRun[Delivery]:
        """Runs ds's handlers in one transaction (run_routed) and dead-letters the bodies no handler takes; what
        the run came to is carried out (_carry_out) after it."""
        todo: list[tuple[Delivery, Routed[Consumer[Any]], str]] = []
        for d in ds:
            r = route_envelope(d.body, d.topic, self._routes, self.group)
            if isinstance(r, Refused):
                self._dead_letter(d, r.topic, r.body, r.env, "", r.dead)
            else:
                todo.append((d, r, d.message_id))
        return run_routed(self.conn, todo) if todo else RoutedRun([], [], [])

    def _carry_out(self, res: RoutedRun[Delivery]) -> None:
        """Acknowledges res's duplicates and successes, sends its retry copies and dead letters, and holds its
        deliveries whose database part failed for db_retry_ms."""
        for d in res.superseded:
            self.counts.deduped += 1
            self._ack(d)
        for d in res.failed:
            self.counts.handed_back += 1
            self._retry_later(d)
        for d, r, dec in res.decided:
            self._decided(d, r, dec)

    def _decided(self, d: Delivery, r: Routed[Consumer[Any]], dec: Decision) -> None:
        if isinstance(dec, Ack):
            if dec.deduplicated:
                self.counts.deduped += 1
            else:
                self.counts.processed += 1
            self._ack(d)
        elif isinstance(dec, Defer):
            self._send_on(d, dec.not_before_ms)
        elif isinstance(dec, Retry):
            nxt = dec.next_envelope
            self._after(d, self._pub.publish_copy(self.group, r.topic, nxt, encode(nxt), nxt.not_before), "retry")
        else:
            self._dead_letter(d, r.topic, r.body, r.env, r.target.handler_name, dec)

    def _dead_letter(self, d: Delivery, topic: str, body: bytes, env: _envelope_pb2.Envelope | None,
                     handler: str, dead: DeadLetter) -> None:
        rec = dead_letter_record(topic, self.group, handler, body, env, dead, self.clock_ms())
        self._after(d, self._pub.store_record(rec), "dead letter")

    def close(self) -> None:
        """Stops the consumers and the producer: what this member holds unacknowledged comes again when its
        invisible duration ends. Idempotent."""
        if self._closed:
            return
        self._closed = True
        # The receives in flight end within the long poll; the client's callbacks fail noisily once it is shut
        # down, so they end first (what they bring stays unacknowledged and comes again). Sends under way are
        # settled: their deliveries are acknowledged once the broker has the copy.
        deadline = time.monotonic() + self.cfg.await_s + self.cfg.request_timeout_s
        while getattr(self, "_receiving", None) and time.monotonic() < deadline:
            try:
                n, item = self._inbox.get(timeout=0.1)
            except queue.Empty:
                continue
            if n == _SETTLE:
                self._settle(*item)
            else:
                self._receiving.discard(n)
        for c in getattr(self, "_consumers", {}).values():
            try:
                c.shutdown()
            except Exception as e:
                log.debug("msgcontract: rocketmq: consumer shutdown: %r", e)
        if hasattr(self, "_pub"):
            self._pub.close()


def _int(v: Any) -> int:
    try:
        return int(v) if v is not None else 0
    except (TypeError, ValueError):
        return 0
