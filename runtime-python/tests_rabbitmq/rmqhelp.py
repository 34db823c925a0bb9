"""Helpers of the RabbitMQ tests: the business database, publishing, waiting, reading queues with pika."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from typing import Any

import pika

import msgcontract_runtime as mc
from msgcontract_runtime import rabbitmq as mr


def sqlite_db(path: str) -> sqlite3.Connection:
    conn = sqlite3.connect(path, timeout=30, isolation_level="DEFERRED", check_same_thread=False)
    mc.migrate(conn)
    conn.execute("CREATE TABLE IF NOT EXISTS effects (biz_key TEXT NOT NULL, order_id TEXT NOT NULL)")
    conn.commit()
    return conn


def record_effect(conn: Any, m: Any, env: Any) -> None:
    """The business write of a PaySuccess in the consumer's DB-API transaction."""
    conn.cursor().execute("INSERT INTO effects (biz_key, order_id) VALUES (?, ?)", (env.biz_key, m.order_id))


def effects(conn: Any) -> tuple[int, int]:
    cur = conn.cursor()
    cur.execute("SELECT count(*), count(DISTINCT biz_key) FROM effects")
    n, d = cur.fetchone()
    conn.commit()
    return int(n), int(d)


def wait(cond: Callable[[], bool], step: Callable[[], None], what: str, limit_s: float = 60) -> None:
    """Runs step until cond holds; a deadline so a broken loop fails instead of hanging."""
    end = time.monotonic() + limit_s
    while not cond():
        if time.monotonic() > end:
            raise AssertionError(f"not reached within {limit_s}s: {what}")
        step()


def pay(spec: Any, pb: Any, order_id: str, amount: int = 100) -> Any:
    return mc.new_envelope(spec, pb.PaySuccess(order_id=order_id, amount=amount, currency="EUR"))


def publish_pay(pub: mr.RabbitMQPublisher, spec: Any, pb: Any, order_id: str, times: int = 1) -> None:
    env = pay(spec, pb, order_id)
    for _ in range(times):
        pub.publish(spec.topic, env)


def queue_depth(url: str, queue: str) -> int:
    """Ready messages of queue (a passive declare)."""
    conn = pika.BlockingConnection(pika.URLParameters(url))
    try:
        ok = conn.channel().queue_declare(queue, passive=True)
        return int(ok.method.message_count)
    finally:
        conn.close()


def drain(url: str, queue: str, want: int, limit_s: float = 30) -> list[tuple[Any, bytes]]:
    """Takes (acks) want messages of queue, waiting for them; returns (properties, body) pairs."""
    conn = pika.BlockingConnection(pika.URLParameters(url))
    out: list[tuple[Any, bytes]] = []
    try:
        ch = conn.channel()
        end = time.monotonic() + limit_s
        while len(out) < want:
            if time.monotonic() > end:
                raise AssertionError(f"{queue}: {len(out)} of {want} messages within {limit_s}s")
            m, props, body = ch.basic_get(queue, auto_ack=True)
            if m is None:
                conn.sleep(0.05)
                continue
            out.append((props, body))
        return out
    finally:
        conn.close()
