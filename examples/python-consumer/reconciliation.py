"""The example reconciliation service: sums paid and refunded amounts per order.

It consumes the same order events as the Go payment-callback service, in a
consumer group of its own, with the generated Python consumer: the dedup
claim is made in the reconciliation database's transaction (the same
msg_dedup layout as the Go runtime), order states are checked with the
generated order_state_can_transit, and failures are classified and retried
or dead-lettered by the contract, exactly as in Go.

The generated consumer is transport-neutral: Consumer.process(conn, body)
returns a decision (Ack, Defer, Retry or DeadLetter) and the transport
carries it out. Two transports are wired here, each laid out as its
runtime-go twin so Go and Python consume side by side:

- --queue FILE: the embedded SQLite queue of runtime-go's sqlitequeue
  (mc_queue, mc_subscriptions, mc_dead_letter); the Queue class below speaks
  that protocol.
- --nats URL: NATS JetStream as runtime-go's natsjs lays it out; see
  natsqueue.py.
- --kafka BROKERS: Apache Kafka with msgcontract_runtime.kafka.KafkaConsumerLoop
  (msgcontract-runtime[kafka]), which lays topics out as runtime-go's kafka
  transport; --namespace is the topic and group prefix, --registry the schema
  registry the Confluent-framed records' ids are checked against.
- --rabbitmq URL: RabbitMQ with msgcontract_runtime.rabbitmq.RabbitMQConsumerLoop
  (msgcontract-runtime[rabbitmq]), on the exchanges and queues of
  docs/rabbitmq.md under --rabbitmq-prefix (default msgcontract), as a member
  of the same group name as on Kafka, beside runtime-go's rabbitmq transport.
- --rocketmq PROXY: RocketMQ 5.x with msgcontract_runtime.rocketmq.RocketMQConsumerLoop
  (msgcontract-runtime[rocketmq]) through the gRPC proxy, on the topics of
  docs/rocketmq.md under --rocketmq-namespace; its group is consumed by this
  service's kind of member only.

Usage: reconciliation.py (--queue QUEUE_DB | --nats URL | --kafka BROKERS [--namespace NS] [--registry URL]
                          | --rabbitmq URL [--rabbitmq-prefix P] | --rocketmq PROXY [--rocketmq-namespace NS])
       --db RECON_DB [--retry-base-ms N]
It runs until SIGTERM or SIGINT, then finishes the messages in hand.

With OTEL_EXPORTER_OTLP_ENDPOINT set, every delivery gets a span "process
order-event" (msgcontract_runtime.tracing) continuing the producer's trace,
exported over OTLP/HTTP as service "reconciliation".
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import os
import secrets
import signal
import sqlite3
import sys
import time
from collections.abc import Callable
from typing import Any

from shop.payment.v1 import payment_msgcontract as contract, payment_pb2 as pb

import msgcontract_runtime as mc

GROUP = "reconciliation"
CODE_ILLEGAL_TRANSITION = 40901
LEASE_MS = 30_000


def now_ms() -> int:
    return int(time.time() * 1000)


@dataclasses.dataclass(frozen=True)
class Delivery:
    row: int
    owner: str
    topic: str
    body: bytes


@dataclasses.dataclass(frozen=True)
class Verdict:
    """What the generated consumer decided for one delivered body, and what carrying it out needs."""

    decision: mc.Decision
    handler: str  # the handler's name, recorded with a dead letter
    env: Any | None  # the decoded envelope; None when the body did not decode

    @property
    def outcome(self) -> str | None:
        """The recon_stats counter the decision adds to; None for a Defer."""
        if isinstance(self.decision, mc.Ack):
            return "deduped" if self.decision.deduplicated else "processed"
        if isinstance(self.decision, mc.Defer):
            return None
        if isinstance(self.decision, mc.Retry):
            return "retried"
        return "dead_lettered"


class Queue:
    """One consumer group of the embedded SQLite queue."""

    def __init__(self, path: str, group: str, topics: list[str]) -> None:
        self.conn = sqlite3.connect(path, timeout=30, isolation_level=None)
        self.conn.execute("PRAGMA busy_timeout = 30000")
        self.group = group
        self.topics = topics
        self.token = secrets.token_hex(8)
        self.seq = 0
        for t in topics:
            self.conn.execute(
                "INSERT INTO mc_subscriptions (topic, grp, created_at) VALUES (?, ?, ?)"
                " ON CONFLICT (topic, grp) DO NOTHING",
                (t, group, now_ms()),
            )

    def fetch(self, limit: int) -> list[Delivery]:
        self.seq += 1
        owner = f"{self.token}:{self.seq}"
        now = now_ms()
        marks = ",".join("?" for _ in self.topics)
        rows = self.conn.execute(
            "UPDATE mc_queue SET lease_owner = ?, lease_until = ?, deliveries = deliveries + 1"
            " WHERE id IN (SELECT id FROM mc_queue WHERE grp = ? AND topic IN (" + marks + ")"
            " AND not_before <= ? AND lease_until <= ? ORDER BY id LIMIT ?)"
            " RETURNING id, topic, body",
            (owner, now + LEASE_MS, self.group, *self.topics, now, now, limit),
        ).fetchall()
        return sorted((Delivery(int(r[0]), owner, str(r[1]), bytes(r[2])) for r in rows), key=lambda d: d.row)

    def _settle(self, d: Delivery, sql: str = "", args: tuple[Any, ...] = ()) -> None:
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            cur = self.conn.execute("DELETE FROM mc_queue WHERE id = ? AND lease_owner = ?", (d.row, d.owner))
            if cur.rowcount == 1 and sql:
                self.conn.execute(sql, args)
            self.conn.execute("COMMIT")
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise

    def settle(self, d: Delivery, decision: mc.Decision, handler: str, env: Any | None) -> None:
        """Carries out the consumer's decision for d (env: the decoded envelope, if it decoded)."""
        if isinstance(decision, mc.Ack):
            self.ack(d)
        elif isinstance(decision, mc.Defer):
            self.defer(d, decision.not_before_ms)
        elif isinstance(decision, mc.Retry):
            self.retry(d, decision.next_envelope)
        else:
            self.dead_letter(d, handler, env, decision)

    def ack(self, d: Delivery) -> None:
        self._settle(d)

    def defer(self, d: Delivery, not_before_ms: int) -> None:
        self.conn.execute(
            "UPDATE mc_queue SET not_before = ?, lease_owner = '', lease_until = 0 WHERE id = ? AND lease_owner = ?",
            (not_before_ms, d.row, d.owner),
        )

    def retry(self, d: Delivery, env: Any) -> None:
        self._settle(
            d,
            "INSERT INTO mc_queue (msg_id, topic, grp, body, not_before, created_at) VALUES (?, ?, ?, ?, ?, ?)",
            (mc.new_message_id(), env.topic or d.topic, self.group, mc.encode(env), env.not_before, now_ms()),
        )

    def dead_letter(self, d: Delivery, handler: str, env: Any | None, dl: mc.DeadLetter) -> None:
        now = now_ms()
        first = env.first_failed_at if env is not None and env.first_failed_at else now
        self._settle(
            d,
            "INSERT INTO mc_dead_letter (topic, grp, handler, event_type, biz_key, message_id, envelope,"
            " reason, code, error, attempts, first_failed_at, last_failed_at, dead_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                d.topic, self.group, handler,
                env.event_type if env is not None else "",
                env.biz_key if env is not None else "",
                env.message_id if env is not None else "",
                d.body, dl.reason, dl.code, dl.error, dl.attempts, first, now, now,
            ),
        )


class Reconciliation:
    """The business side: per-order paid and refunded sums, kept in the service's own database."""

    def __init__(self, path: str, retry: mc.RetryPolicy | None, tracer: mc.DeliveryTracer | None = None) -> None:
        self.conn = sqlite3.connect(path, timeout=30)
        self.conn.execute("PRAGMA journal_mode = WAL")
        self.conn.execute("PRAGMA busy_timeout = 30000")
        mc.migrate(self.conn)
        self.conn.executescript(
            """
            CREATE TABLE IF NOT EXISTS recon_orders (
                order_id TEXT PRIMARY KEY, state TEXT NOT NULL,
                paid INTEGER NOT NULL DEFAULT 0, refunded INTEGER NOT NULL DEFAULT 0);
            CREATE TABLE IF NOT EXISTS recon_effects (
                id INTEGER PRIMARY KEY AUTOINCREMENT, order_id TEXT NOT NULL,
                kind TEXT NOT NULL, ref TEXT NOT NULL, amount INTEGER NOT NULL);
            CREATE TABLE IF NOT EXISTS recon_stats (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
            """
        )
        self.conn.commit()

        def spec(s: mc.EventSpec[Any]) -> mc.EventSpec[Any]:
            return s if retry is None else dataclasses.replace(s, retry=retry)

        self.consumers: dict[str, mc.Consumer[Any]] = {
            contract.PAY_SUCCESS_EVENT_TYPE: mc.Consumer(
                spec(contract.PAY_SUCCESS), "reconciliation.pay", self.on_pay, tracer=tracer
            ),
            contract.REFUND_REQUESTED_EVENT_TYPE: mc.Consumer(
                spec(contract.REFUND_REQUESTED), "reconciliation.refund-requested", self.on_refund_requested,
                tracer=tracer,
            ),
            contract.REFUND_SUCCESS_EVENT_TYPE: mc.Consumer(
                spec(contract.REFUND_SUCCESS), "reconciliation.refund", self.on_refund, tracer=tracer
            ),
        }

    def transit(self, conn: Any, order_id: str, target: str) -> bool:
        """Moves the order to target; False for DUPLICATE, a non-retryable error for ILLEGAL."""
        conn.execute(
            "INSERT INTO recon_orders (order_id, state) VALUES (?, 'PAYING') ON CONFLICT (order_id) DO NOTHING",
            (order_id,),
        )
        (cur,) = conn.execute("SELECT state FROM recon_orders WHERE order_id = ?", (order_id,)).fetchone()
        verdict = contract.order_state_can_transit(cur, target)
        if verdict is mc.Transit.DUPLICATE:
            return False
        if verdict is mc.Transit.ILLEGAL:
            print(f"reconciliation: ALERT illegal transition {cur} -> {target} for {order_id}", file=sys.stderr)
            raise contract.error(CODE_ILLEGAL_TRANSITION, f"order {order_id}: illegal transition {cur} -> {target}")
        conn.execute("UPDATE recon_orders SET state = ? WHERE order_id = ?", (target, order_id))
        return True

    def on_pay(self, conn: Any, m: pb.PaySuccess, env: Any) -> None:
        if self.transit(conn, m.order_id, "PAID"):
            conn.execute("UPDATE recon_orders SET paid = paid + ? WHERE order_id = ?", (m.amount, m.order_id))
            conn.execute(
                "INSERT INTO recon_effects (order_id, kind, ref, amount) VALUES (?, 'PAY', '', ?)",
                (m.order_id, m.amount),
            )

    def on_refund_requested(self, conn: Any, m: pb.RefundRequested, env: Any) -> None:
        self.transit(conn, m.order_id, "REFUNDING")

    def on_refund(self, conn: Any, m: pb.RefundSuccess, env: Any) -> None:
        if self.transit(conn, m.order_id, "REFUNDED"):
            conn.execute("UPDATE recon_orders SET refunded = refunded + ? WHERE order_id = ?", (m.amount, m.order_id))
            conn.execute(
                "INSERT INTO recon_effects (order_id, kind, ref, amount) VALUES (?, 'REFUND', ?, ?)",
                (m.order_id, m.refund_id, m.amount),
            )

    def count(self, v: Verdict) -> None:
        """Counts a carried-out verdict in recon_stats (the demo's summary reads them)."""
        if v.outcome is None:
            return
        self.conn.execute(
            "INSERT INTO recon_stats (name, value) VALUES (?, 1) ON CONFLICT (name) DO UPDATE SET value = value + 1",
            (v.outcome,),
        )
        self.conn.commit()

    def decide(self, body: bytes) -> Verdict:
        """Runs one delivered body through the generated consumer of its event type.

        The transport then carries out the verdict (Queue.settle or
        JetStreamQueue.settle) and only after that is it counted.
        """
        try:
            env: Any | None = mc.decode(body)
        except mc.DecodeError:
            env = None
        if env is None:
            consumer = self.consumers[contract.PAY_SUCCESS_EVENT_TYPE]  # any consumer dead-letters a bad body
        elif env.event_type not in self.consumers:
            return Verdict(mc.DeadLetter("no_handler", -4, f"no handler for {env.event_type}", 0), "", env)
        else:
            consumer = self.consumers[env.event_type]
        return Verdict(consumer.process(self.conn, body), consumer.handler_name, env)


def consume_sqlite(path: str, recon: Reconciliation, stopping: Callable[[], bool]) -> None:
    """The consume loop on the embedded SQLite queue, until stopping() is true."""
    q = Queue(path, GROUP, [contract.PAY_SUCCESS_TOPIC])
    print("reconciliation: consuming group", GROUP, flush=True)
    while not stopping():
        batch = q.fetch(16)
        if not batch:
            time.sleep(0.05)
            continue
        for d in batch:
            v = recon.decide(d.body)
            q.settle(d, v.decision, v.handler, v.env)
            recon.count(v)


async def consume_nats(url: str, recon: Reconciliation, stopping: Callable[[], bool]) -> None:
    """The consume loop on NATS JetStream, until stopping() is true.

    The database work is synchronous and runs on the event loop: one
    message at a time, as in the SQLite loop. Only the transport is async.
    """
    from natsqueue import JetStreamQueue  # nats-py is needed only on this path

    q = await JetStreamQueue.connect(url, GROUP, [contract.PAY_SUCCESS_TOPIC])
    print("reconciliation: consuming group", GROUP, "on", url, flush=True)
    try:
        while not stopping():
            for d in await q.fetch(16):  # waits up to natsqueue.FETCH_WAIT_S
                v = recon.decide(d.body)
                await q.settle(d, v.decision, v.handler, v.env)
                recon.count(v)
    finally:
        await q.close()


def store_counts(recon: Reconciliation, c: Any) -> None:
    """Writes a broker loop's counts (processed, deduped, retried, dead_lettered) to recon_stats: the loops
    that decide and settle by themselves report once, when they stop."""
    for name, value in (("processed", c.processed), ("deduped", c.deduped), ("retried", c.retried),
                        ("dead_lettered", c.dead_lettered)):
        recon.conn.execute(
            "INSERT INTO recon_stats (name, value) VALUES (?, ?) "
            "ON CONFLICT (name) DO UPDATE SET value = excluded.value",
            (name, value),
        )
    recon.conn.commit()


def consume_kafka(brokers: str, namespace: str, registry: str | None, recon: Reconciliation,
                  stopping: Callable[[], bool]) -> None:
    """The consume loop on Kafka, until stopping() is true: KafkaConsumerLoop runs the same generated consumers.

    KafkaConsumerLoop decides and settles by itself, so its counts are written to
    recon_stats once, when it stops.
    """
    from msgcontract_runtime.kafka import KafkaConsumerLoop  # confluent-kafka is needed only on this path

    loop = KafkaConsumerLoop(brokers, GROUP, list(recon.consumers.values()), recon.conn, namespace=namespace,
                     registry_url=registry, partitions=3)
    print("reconciliation: consuming group", namespace + GROUP, "on", brokers, flush=True)
    loop.run(stopping)
    store_counts(recon, loop.counts)


def consume_rabbitmq(url: str, prefix: str, recon: Reconciliation, stopping: Callable[[], bool]) -> None:
    """The consume loop on RabbitMQ, until stopping() is true: RabbitMQConsumerLoop runs the same generated
    consumers as a member of GROUP (queues PREFIX/GROUP/TOPIC); its counts go to recon_stats when it stops."""
    from msgcontract_runtime.rabbitmq import RabbitMQConsumerLoop  # pika is needed only on this path

    loop = RabbitMQConsumerLoop(url, GROUP, list(recon.consumers.values()), recon.conn, prefix=prefix)
    print("reconciliation: consuming group", GROUP, "with prefix", prefix, "on RabbitMQ", flush=True)
    loop.run(stopping)
    store_counts(recon, loop.counts)


def consume_rocketmq(endpoint: str, namespace: str, recon: Reconciliation, stopping: Callable[[], bool]) -> None:
    """The consume loop on RocketMQ, until stopping() is true: RocketMQConsumerLoop runs the same generated
    consumers as a member of GROUP through the proxy at endpoint (topics NAMESPACE+TOPIC and
    NAMESPACE+GROUP_retry, which must exist); its counts go to recon_stats when it stops."""
    from msgcontract_runtime.rocketmq import Config, RocketMQConsumerLoop  # the 5.x client: only on this path

    loop = RocketMQConsumerLoop(Config(endpoint, namespace=namespace), GROUP, list(recon.consumers.values()),
                                recon.conn)
    print("reconciliation: consuming group", namespace + GROUP, "through the RocketMQ proxy", endpoint, flush=True)
    loop.run(stopping)
    store_counts(recon, loop.counts)


def start_tracing(system: str) -> tuple[mc.DeliveryTracer | None, Callable[[], None]]:
    """Spans over OTLP/HTTP to $OTEL_EXPORTER_OTLP_ENDPOINT as service "reconciliation"; none when it is unset.

    system is messaging.system, the transport's name. The second value
    flushes and stops the exporter.
    """
    if not os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT"):
        return None, lambda: None
    # The OpenTelemetry SDK is needed only with tracing on.
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    from msgcontract_runtime.tracing import Tracing

    tp = TracerProvider(resource=Resource.create({"service.name": "reconciliation"}))
    tp.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(), schedule_delay_millis=200))
    return Tracing(tp, system, GROUP), tp.shutdown


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    where = ap.add_mutually_exclusive_group(required=True)
    where.add_argument("--queue", help="the embedded queue's SQLite file")
    where.add_argument("--nats", metavar="URL", help="a NATS server with JetStream, e.g. nats://127.0.0.1:4222")
    where.add_argument("--kafka", metavar="BROKERS", help="Kafka brokers, host:port[,host:port...]")
    where.add_argument("--rabbitmq", metavar="URL", help="a RabbitMQ AMQP URL, e.g. amqp://guest:guest@127.0.0.1:5672/")
    ap.add_argument("--rabbitmq-prefix", metavar="P", default="msgcontract",
                    help="with --rabbitmq: the exchange and queue prefix (rabbitmq Config.Prefix)")
    where.add_argument("--rocketmq", metavar="PROXY", help="a RocketMQ 5.x gRPC proxy, host:port")
    ap.add_argument("--rocketmq-namespace", metavar="NS", default="",
                    help="with --rocketmq: the prefix of every topic and group name (rocketmq Config.namespace)")
    ap.add_argument("--namespace", default="", help="with --kafka: the prefix of every topic and group name")
    ap.add_argument("--registry", metavar="URL", help="with --kafka: the schema registry of Confluent-framed records")
    ap.add_argument("--db", required=True, help="the reconciliation database")
    ap.add_argument("--retry-base-ms", type=int, default=0, help="shorten the contract's retry policy (demo)")
    args = ap.parse_args()
    retry = None
    if args.retry_base_ms > 0:
        retry = mc.RetryPolicy(
            base_ms=args.retry_base_ms, multiplier=2.0, jitter_ms=args.retry_base_ms // 2,
            max_delay_ms=args.retry_base_ms * 16, max_retries=4,
        )
    stopping = False

    def stop(signum: int, frame: Any) -> None:
        nonlocal stopping
        stopping = True

    # The loops check the flag between batches: the messages in hand are
    # handled and settled before the service exits.
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    system = ("nats" if args.nats else "kafka" if args.kafka else "rabbitmq" if args.rabbitmq
              else "rocketmq" if args.rocketmq else "msgcontract_sqlite")
    tracer, stop_tracing = start_tracing(system)
    recon = Reconciliation(args.db, retry, tracer)
    try:
        if args.nats:
            asyncio.run(consume_nats(args.nats, recon, lambda: stopping))
        elif args.kafka:
            consume_kafka(args.kafka, args.namespace, args.registry, recon, lambda: stopping)
        elif args.rabbitmq:
            consume_rabbitmq(args.rabbitmq, args.rabbitmq_prefix, recon, lambda: stopping)
        elif args.rocketmq:
            consume_rocketmq(args.rocketmq, args.rocketmq_namespace, recon, lambda: stopping)
        else:
            consume_sqlite(args.queue, recon, lambda: stopping)
    finally:
        stop_tracing()
    print("reconciliation: stopped", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
