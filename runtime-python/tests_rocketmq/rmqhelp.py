"""Helpers of the RocketMQ tests: the business database, publishing, waiting."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from typing import Any

from google.protobuf import wrappers_pb2

import msgcontract_runtime as mc
from msgcontract_runtime import rocketmq as mq


def sqlite_db(path: str) -> sqlite3.Connection:
    conn = sqlite3.connect(path, timeout=30, isolation_level="DEFERRED", check_same_thread=False)
    mc.migrate(conn)
    conn.execute("CREATE TABLE IF NOT EXISTS effects (biz_key TEXT NOT NULL, note TEXT NOT NULL)")
    conn.commit()
    return conn


def insert(note: str) -> Callable[[Any, Any, Any], None]:
    """The handler most tests use: one row per run, the effect the dedup must keep single."""
    def handle(conn: Any, m: Any, env: Any) -> None:
        conn.cursor().execute("INSERT INTO effects (biz_key, note) VALUES (?, ?)", (m.value, note))
    return handle


def effects(conn: Any) -> dict[str, int]:
    cur = conn.cursor()
    cur.execute("SELECT biz_key, count(*) FROM effects GROUP BY biz_key")
    out = {str(k): int(n) for k, n in cur.fetchall()}
    conn.commit()
    return out


def notes(conn: Any) -> set[str]:
    cur = conn.cursor()
    cur.execute("SELECT DISTINCT note FROM effects")
    out = {str(r[0]) for r in cur.fetchall()}
    conn.commit()
    return out


def envelope(spec: mc.EventSpec[Any], value: str) -> Any:
    return mc.new_envelope(spec, wrappers_pb2.StringValue(value=value))


def wait(cond: Callable[[], bool], step: Callable[[], None], what: str, limit_s: float = 120) -> None:
    """Runs step until cond holds; a deadline so a broken loop fails instead of hanging."""
    end = time.monotonic() + limit_s
    while not cond():
        if time.monotonic() > end:
            raise AssertionError(f"not reached within {limit_s}s: {what}")
        step()


def one_each(effs: dict[str, int], n: int) -> None:
    assert len(effs) == n, f"effects: {effs}"
    assert all(c == 1 for c in effs.values()), f"applied more than once: {effs}"


def loop(cfg: mq.Config, spec: mc.EventSpec[Any], handler: Callable[[Any, Any, Any], None], db: Any,
         group: str = "billing") -> mq.RocketMQConsumerLoop:
    return mq.RocketMQConsumerLoop(cfg, group, [mc.Consumer(spec, "record-effect", handler)], db)
