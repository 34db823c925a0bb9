"""Helpers of the Kafka tests: a business database, a topic reader, a bounded wait."""

from __future__ import annotations

import json
import os
import sqlite3
import time
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from confluent_kafka import Consumer, TopicPartition

import msgcontract_runtime as mc
from msgcontract_runtime import kafka as mk


def sqlite_db(path: str) -> sqlite3.Connection:
    conn = sqlite3.connect(path, timeout=30, isolation_level="DEFERRED", check_same_thread=False)
    mc.migrate(conn)
    conn.execute("CREATE TABLE IF NOT EXISTS effects (biz_key TEXT NOT NULL, order_id TEXT NOT NULL)")
    conn.commit()
    return conn


def pg_schema(ns: str) -> Callable[[], Any]:
    """Creates a PostgreSQL schema named after namespace ns (MSGCONTRACT_PG_DSN) and returns a function
    opening psycopg connections whose search_path is it."""
    import psycopg

    dsn = os.environ.get("MSGCONTRACT_PG_DSN", "")
    if not dsn:
        pytest.fail("MSGCONTRACT_PG_DSN is not set: run through `make test-kafka-python` (scripts/with-postgres.sh)")
    schema = ns.replace(".", "").replace("-", "_")
    with psycopg.connect(dsn, autocommit=True) as admin:
        admin.execute(f"CREATE SCHEMA {schema}")
    return lambda: psycopg.connect(dsn, options=f"-c search_path={schema}")


def record_effect(conn: Any, m: Any, env: Any, paramstyle: str = "qmark") -> None:
    """The business write of a PaySuccess in the consumer's DB-API transaction (paramstyle "format": psycopg)."""
    p = "?" if paramstyle == "qmark" else "%s"
    conn.cursor().execute(f"INSERT INTO effects (biz_key, order_id) VALUES ({p}, {p})", (env.biz_key, m.order_id))


def effects(conn: Any) -> tuple[int, int]:
    cur = conn.cursor()
    cur.execute("SELECT count(*), count(DISTINCT biz_key) FROM effects")
    n, d = cur.fetchone()
    conn.commit()
    return int(n), int(d)


def wait(cond: Callable[[], bool], step: Callable[[], None], what: str, limit_s: float = 120) -> None:
    """Runs step until cond holds; a deadline so a broken loop fails instead of hanging."""
    end = time.monotonic() + limit_s
    while not cond():
        if time.monotonic() > end:
            raise AssertionError(f"not reached within {limit_s}s: {what}")
        step()


def read_topic(brokers: str, name: str, min_records: int = 0, limit_s: float = 60) -> list[Any]:
    """Every record of topic name from its start, waiting for at least min_records."""
    c = Consumer({"bootstrap.servers": brokers, "group.id": "reader-" + uuid.uuid4().hex,
                  "enable.auto.commit": False, "auto.offset.reset": "earliest", "enable.partition.eof": True})
    try:
        md = c.list_topics(name, timeout=10)
        parts = list(md.topics[name].partitions)
        out: list[Any] = []
        end = time.monotonic() + limit_s
        while True:
            c.assign([TopicPartition(name, p, 0) for p in parts])
            eof: set[int] = set()
            out = []
            while len(eof) < len(parts):
                if time.monotonic() > end:
                    raise AssertionError(f"{name}: {len(out)} records, want {min_records}")
                m = c.poll(0.5)
                if m is None:
                    continue
                if m.error():
                    part = m.partition()
                    assert part is not None, m.error()  # a partition EOF names its partition
                    eof.add(part)
                    continue
                out.append(m)
            if len(out) >= min_records:
                return out
            time.sleep(0.2)
    finally:
        c.close()


def dlq_meta(m: Any) -> dict[str, Any]:
    return dict(json.loads(dict(m.headers())[mk.HEADER_DLQ]))


def publish_pay(pub: mk.KafkaPublisher, spec: Any, pb: Any, order_id: str, amount: int = 100, times: int = 1) -> None:
    env = mc.new_envelope(spec, pb.PaySuccess(order_id=order_id, amount=amount, currency="EUR"))
    for _ in range(times):
        pub.publish(spec.topic, env)


def publish_orders(brokers: str, ns: str, partitions: int, spec: Any, pb: Any, n: int, times: int = 1) -> None:
    """Publishes PaySuccess o-0 .. o-<n-1>, each times times."""
    pub = mk.KafkaPublisher(brokers, namespace=ns, partitions=partitions)
    for i in range(n):
        publish_pay(pub, spec, pb, f"o-{i}", times=times)
    pub.close()


def publish_poison(pub: mk.KafkaPublisher, spec: Any, pb: Any, ns: str) -> None:
    """A garbled payload, "refused" (the tests' handlers refuse it), "fine", and a value that is not an envelope."""
    bad = mc.new_envelope(spec, pb.PaySuccess(order_id="garbled"))
    bad.payload = b"\xff\xff\xff"  # not a PaySuccess
    pub.publish(spec.topic, bad)
    publish_pay(pub, spec, pb, "refused")
    publish_pay(pub, spec, pb, "fine")
    pub._p.produce(ns + "order-event", b"k", b"\x0a\x01", [])  # not even an envelope
