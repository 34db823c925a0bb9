"""FIFO groups on a real broker (docs/rocketmq.md, "FIFO groups"): a biz_key's messages reach the handlers one at
a time in publish order while other keys go on, and a retry copy leaves the line and is not blocked by another
copy held until its not_before."""

from __future__ import annotations

import dataclasses
import pathlib
import time
from collections import defaultdict
from typing import Any

import pytest
from google.protobuf import wrappers_pb2

import msgcontract_runtime as mc
from conftest import FIFO_GROUP, FIFO_TOPIC, HANDLER, note_spec
from msgcontract_runtime import envelope as envelope_codec, rocketmq as mq
from msgcontract_runtime.consumer import RoutedRun
from msgcontract_runtime.event import DecodeError
from rmqhelp import sqlite_db, wait

SHIPPED = "ORDER_SHIPPED"


def keyed(spec: mc.EventSpec[Any]) -> mc.EventSpec[Any]:
    """spec whose biz_key is the value up to '#': "k1#0" and "k1#1" are two payloads of key k1."""
    return dataclasses.replace(spec, biz_key_template="{value}", key_function=lambda m: m.value.split("#")[0])


def publish(pub: mq.RocketMQPublisher, spec: mc.EventSpec[Any], value: str) -> str:
    """Publishes value as spec's event; returns its message id."""
    e = mc.new_envelope(spec, wrappers_pb2.StringValue(value=value))
    pub.publish(spec.topic, e)
    return str(e.message_id)


def now_ms() -> int:
    return int(time.time() * 1000)


class Recording(mq.RocketMQConsumerLoop):
    """The loop, recording every batch of due deliveries it runs as (biz_key, message id) pairs."""

    batches: list[list[tuple[str, str]]]

    def _run_due(self, ds: list[mq.Delivery]) -> RoutedRun[mq.Delivery]:
        self.batches.append([ids(d.body) for d in ds])
        return super()._run_due(ds)


def recording(cfg: mq.Config, consumers: list[mc.Consumer[Any]], db: Any) -> Recording:
    lp = Recording(cfg, FIFO_GROUP, consumers, db)
    lp.batches = []
    return lp


def ids(body: bytes) -> tuple[str, str]:
    try:
        e = envelope_codec.decode(body)
    except DecodeError:
        return "", ""
    return str(e.biz_key), str(e.message_id)


def test_fifo_config_message_group_and_tx_refusal() -> None:
    c = mq.Config("127.0.0.1:8081", namespace="ns_", fifo_topics=["orders"], fifo_groups=["billing"])
    c.validate()
    assert c.is_fifo("orders") and not c.is_fifo("audit")
    assert c.is_fifo_group("billing") and not c.is_fifo_group("audit")
    for bad, want in ((mq.Config("127.0.0.1:8081", fifo_topics="orders"), "fifo_topics 'orders' must be a sequence"),
                      (mq.Config("127.0.0.1:8081", fifo_topics=["orders", ""]), "none empty"),
                      (mq.Config("127.0.0.1:8081", fifo_groups="billing"), "fifo_groups 'billing' must be a sequence"),
                      (mq.Config("127.0.0.1:8081", fifo_groups=[""]), "none empty")):
        with pytest.raises(mq.ConfigError, match=want):
            bad.validate()
        assert not bad.is_fifo("o")
    spec = note_spec(topic="orders")
    env = mc.new_envelope(spec, wrappers_pb2.StringValue(value="order-7"))
    assert mq.message_group(env) == "order-7"
    assert mq._event_message(c, "orders", env).message_group == "order-7"
    assert mq._event_message(c, "audit", env).message_group is None, "a NORMAL topic's message has no group"
    env.biz_key = ""
    assert mq.message_group(env) == env.message_id, "no biz_key: the message id"
    # What the proxy refuses (64 bytes or more, control characters) becomes a digest: one key, one group.
    for key in ("x" * 64, "é" * 32, "a\tb", "  "):
        env.biz_key = key
        g = mq.message_group(env)
        assert g.startswith("sha256:") and len(g.encode()) == mq.MAX_GROUP_BYTES and g == mq.message_group(env)
    env.biz_key = "x" * 63
    assert mq.message_group(env) == "x" * 63
    env.biz_key, env.message_id = "", ""
    with pytest.raises(ValueError, match="neither biz_key nor message id"):
        mq.message_group(env)
    with pytest.raises(mq.ConfigError, match=r"topics \['orders'\] are FIFO topics"):
        mq.RocketMQTxProducer(c, ["audit", "orders"], object(), lambda: None)


def test_fifo_group_keeps_each_keys_order(tmp_path: pathlib.Path, fifo_cfg: mq.Config) -> None:
    """20 keys × 3 messages, published interleaved: each key's are taken one at a time in publish order, so its
    claim holds its first message and only the first payload reaches the handler."""
    spec = keyed(note_spec(topic=FIFO_TOPIC))
    seen: list[str] = []
    decided: list[tuple[str, str, str | None]] = []  # (biz_key, message id, outcome), as the observer is told

    def handler(conn: Any, m: Any, e: Any) -> None:
        seen.append(m.value)

    def observe(o: mc.Outcome) -> None:
        assert o.envelope is not None
        decided.append((o.envelope.biz_key, o.envelope.message_id, o.label))

    db = sqlite_db(str(tmp_path / "biz.db"))
    cfg = dataclasses.replace(fifo_cfg, batch_size=16)
    lp = recording(cfg, [mc.Consumer(spec, HANDLER, handler, observer=observe)], db)
    pub = mq.RocketMQPublisher(cfg)
    keys = [f"k{i:02d}" for i in range(20)]
    published: dict[str, list[str]] = defaultdict(list)
    try:
        for r in range(3):
            for k in keys:
                published[k].append(publish(pub, spec, f"{k}#{r}"))
        want = {mid for mids in published.values() for mid in mids}
        wait(lambda: {mid for _, mid, _ in decided} >= want, lp.step, "every message decided")
    finally:
        pub.close()
        lp.close()
    for b in lp.batches:
        ks = [k for k, _ in b if k]
        assert len(ks) == len(set(ks)), f"two deliveries of one key in one batch: {b}"
    taken: dict[str, list[str]] = defaultdict(list)
    for k, mid in (p for b in lp.batches for p in b):
        if mid not in taken[k]:  # the broker may deliver a message twice: its first take counts
            taken[k].append(mid)
    cur = db.cursor()
    cur.execute("SELECT biz_key, message_id FROM msg_dedup WHERE handler = ?", (HANDLER,))
    claims = dict(cur.fetchall())
    for k in keys:
        assert taken[k] == published[k], f"{k} taken out of publish order"
        assert claims[k] == published[k][0], f"{k}'s claim holds a later message"
        outcomes = [(mid, label) for key, mid, label in decided if key == k]
        assert outcomes[0] == (published[k][0], "handled"), (k, outcomes)
    assert sorted(seen) == sorted(f"{k}#0" for k in keys), "a handler saw a later payload"
    assert (lp.counts.processed, lp.counts.retried, lp.counts.expired) == (20, 0, 0)


def test_fifo_retry_leaves_the_line_and_copies_are_not_blocked(tmp_path: pathlib.Path, fifo_cfg: mq.Config) -> None:
    """Key k: ORDER_PAID fails once and ORDER_SHIPPED follows it in k's line: SHIPPED is handled as soon as PAID's
    retry copy is stored, before the copy's not_before, and the copy is handled at its not_before.

    Key x fails twice; its second copy, due 2.5 s later, is held by the loop unacknowledged. Keys y0..y7 fail once
    after that copy is stored: their copies (due 1 s later) go round the retry topic's queues behind it, so one
    shares its queue. The retry topic is read as a non-orderly group: none waits for x's copy to be settled.
    Copies due within the timer lead (3 s here) are sent at once, so a queue holds them in send order."""
    paid = note_spec(topic=FIFO_TOPIC, base_ms=1000, multiplier=2.5, jitter_ms=0, max_delay_ms=5000)
    shipped = note_spec(topic=FIFO_TOPIC, event_type=SHIPPED)
    failures = {"k": 1, "x": 2} | {f"y{i}": 1 for i in range(8)}
    late: dict[tuple[str, int], int] = {}  # (value, retry_count) -> ms after its not_before it ran
    ran: dict[str, int] = {}  # value -> when its handler last ran (ms)

    def on_paid(conn: Any, m: Any, e: Any) -> None:
        ran[m.value] = now_ms()
        if e.retry_count > 0:
            late[(m.value, e.retry_count)] = now_ms() - e.not_before
        if e.retry_count < failures[m.value]:
            raise mc.RetryableError(50001, "system", "not yet")

    def on_shipped(conn: Any, m: Any, e: Any) -> None:
        ran["shipped " + m.value] = now_ms()

    db = sqlite_db(str(tmp_path / "biz.db"))
    cfg = dataclasses.replace(fifo_cfg, batch_size=8, timer_lead_ms=3000)
    lp = recording(cfg, [mc.Consumer(paid, HANDLER, on_paid), mc.Consumer(shipped, "ship", on_shipped)], db)
    pub = mq.RocketMQPublisher(cfg)
    ys_sent = False

    def step() -> None:
        nonlocal ys_sent
        lp.step()
        if not ys_sent and ("x", 1) in late and lp.counts.retried >= 3:  # x's second copy is stored
            ys_sent = True
            for i in range(8):
                publish(pub, paid, f"y{i}")

    try:
        publish(pub, paid, "k")
        publish(pub, shipped, "k")
        publish(pub, paid, "x")
        wait(lambda: lp.counts.processed == 11, step, "k, x, the 8 ys paid and k shipped")
    finally:
        pub.close()
        lp.close()
    assert lp.counts.retried == 11 and lp.counts.expired == 0, lp.counts
    k_copy_due = ran["k"] - late[("k", 1)]
    assert ran["shipped k"] < k_copy_due, "k's SHIPPED waited behind PAID's retry copy"
    over = {v: ms for v, ms in late.items() if not 0 <= ms < 700}
    assert not over, f"copies handled early (<0) or blocked behind x's held copy (ms after not_before): {over}"
    assert late[("x", 2)] >= 0 and len(late) == 11, late
