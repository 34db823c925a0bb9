"""RabbitMQConsumerLoop and RabbitMQPublisher on a real node: effect once, retry, dead letters, the wire format."""

from __future__ import annotations

import base64
import json
import pathlib
import re
from typing import Any

import msgcontract_runtime as mc
from conftest import url
from msgcontract_runtime import rabbitmq as mr
from rmqhelp import drain, effects, publish_pay, record_effect, sqlite_db, wait


def test_duplicates_apply_once(tmp_path: pathlib.Path, spec: Any, pb: Any, prefix: str) -> None:
    db = sqlite_db(str(tmp_path / "biz.db"))
    loop = mr.RabbitMQConsumerLoop(url(), "recon", [mc.Consumer(spec, "recon.pay", record_effect)], db,
                                   prefix=prefix, batch_size=8)
    pub = mr.RabbitMQPublisher(mr.Config(url(), prefix=prefix))
    for i in range(20):
        publish_pay(pub, spec, pb, f"o-{i}", times=2)
    pub.close()
    try:
        wait(lambda: loop.counts.processed + loop.counts.deduped == 40, loop.step, "40 deliveries")
    finally:
        loop.close()
    assert (loop.counts.processed, loop.counts.deduped) == (20, 20)
    assert effects(db) == (20, 20)


def test_redeclare_with_the_spec_arguments(prefix: str, spec: Any) -> None:
    """docs/rabbitmq.md's table, written out here as a plain AMQP client would send it, is accepted on the
    names the loop declared (a 406 would close the channel); the delay queue's TTL as a signed 64-bit l."""
    import pika
    from pika.compat import long

    loop = mr.RabbitMQConsumerLoop(url(), "g", [mc.Consumer(spec, "h", record_effect)], sqlite_db(":memory:"),
                                   prefix=prefix)
    loop.close()
    conn = pika.BlockingConnection(pika.URLParameters(url()))
    try:
        ch = conn.channel()
        p = prefix
        ch.exchange_declare(p, "topic", durable=True, arguments={"alternate-exchange": p + ".unrouted"})
        for x, kind in ((p + ".retry", "direct"), (p + ".delay", "direct"), (p + ".unrouted", "fanout")):
            ch.exchange_declare(x, kind, durable=True)
        for q in (p + ".unrouted", p + ".dlq", f"{p}/g/order-event"):
            ch.queue_declare(q, durable=True, arguments={"x-queue-type": "quorum"})
        for n in (16, 256, 4096):
            ch.queue_declare(f"{p}.delay/g/{n}", durable=True, arguments={
                "x-queue-type": "quorum", "x-message-ttl": long(n), "x-dead-letter-exchange": p + ".retry",
                "x-dead-letter-strategy": "at-least-once", "x-overflow": "reject-publish"})
        assert ch.is_open
    finally:
        conn.close()


def test_wire_format_of_an_event(prefix: str, spec: Any, pb: Any) -> None:
    """An event's properties and headers as docs/rabbitmq.md, "Messages", lists them."""
    import pika

    pub = mr.RabbitMQPublisher(mr.Config(url(), prefix=prefix))
    conn = pika.BlockingConnection(pika.URLParameters(url()))
    try:
        ch = conn.channel()
        q = f"{prefix}/probe/order-event"
        ch.queue_declare(q, durable=True, arguments={"x-queue-type": "quorum"})
        ch.queue_bind(q, prefix, routing_key="order-event")
        env = mc.new_envelope(spec, pb.PaySuccess(order_id="w", amount=1, currency="EUR"))
        env.not_before = 4102444800000  # 2100-01-01
        pub.publish("order-event", env)
        props, body = drain(url(), q, 1)[0]
    finally:
        conn.close()
        pub.close()
    assert re.fullmatch(r"[0-9a-f]{32}", props.message_id)
    assert props.delivery_mode == 2
    assert props.content_type == "application/x-protobuf; messageType=msgcontract.v1.Envelope"
    headers = {k: v for k, v in props.headers.items() if k != "x-delivery-count"}  # the broker's (quorum queues)
    assert headers == {"x-msgcontract-topic": "order-event", "x-msgcontract-not-before": 4102444800000}
    assert mc.decode(body).biz_key == env.biz_key


def test_retry_then_success(tmp_path: pathlib.Path, spec: Any, pb: Any, prefix: str) -> None:
    """Two retryable failures (the 200 ms, then 400 ms schedule), each retry a fresh copy handled no earlier
    than its not_before, then success: one effect."""
    calls: list[tuple[int, int, int]] = []  # (retry_count, not_before, handled at)

    def handler(conn: Any, m: Any, env: Any) -> None:
        calls.append((env.retry_count, env.not_before, mr._now_ms()))
        record_effect(conn, m, env)
        if m.order_id == "flaky" and len(calls) <= 2:
            raise mc.RetryableError(50301, "system", "ledger answered 503")

    db = sqlite_db(str(tmp_path / "biz.db"))
    loop = mr.RabbitMQConsumerLoop(url(), "recon", [mc.Consumer(spec, "recon.pay", handler)], db, prefix=prefix)
    pub = mr.RabbitMQPublisher(mr.Config(url(), prefix=prefix))
    publish_pay(pub, spec, pb, "flaky")
    pub.close()
    try:
        wait(lambda: loop.counts.processed == 1, loop.step, "the third attempt succeeds")
    finally:
        loop.close()
    assert [c[0] for c in calls] == [0, 1, 2]
    assert all(at >= nb for _, nb, at in calls), calls
    # The schedule: not_before is the failure's time (read just before its handler ran) plus 200, then 400 ms.
    assert calls[1][1] - calls[0][2] >= 200 - 5 and calls[2][1] - calls[1][2] >= 400 - 5, calls
    assert loop.counts.retried == 2
    assert effects(db) == (1, 1)


def test_not_before_is_deferred_through_the_delay_queues(tmp_path: pathlib.Path, spec: Any, pb: Any,
                                                         prefix: str) -> None:
    """An event published with a not_before 300 ms ahead goes through the delay queues (deferred, same
    message_id) and reaches its handler no earlier."""
    seen: list[tuple[int, int]] = []

    def handler(conn: Any, m: Any, env: Any) -> None:
        seen.append((env.not_before, mr._now_ms()))
        record_effect(conn, m, env)

    db = sqlite_db(str(tmp_path / "biz.db"))
    loop = mr.RabbitMQConsumerLoop(url(), "recon", [mc.Consumer(spec, "recon.pay", handler)], db, prefix=prefix)
    pub = mr.RabbitMQPublisher(mr.Config(url(), prefix=prefix))
    env = mc.new_envelope(spec, pb.PaySuccess(order_id="later", amount=1, currency="EUR"))
    env.not_before = mr._now_ms() + 300
    pub.publish("order-event", env)
    pub.close()
    try:
        wait(lambda: loop.counts.processed == 1, loop.step, "the deferred event")
    finally:
        loop.close()
    assert loop.counts.deferred >= 1
    assert seen[0][1] >= seen[0][0] == env.not_before


def dead_letter_setup(tmp_path: pathlib.Path, pb: Any, prefix: str) -> tuple[Any, mr.RabbitMQConsumerLoop]:
    """A group whose handler refuses "refused" (non-retryable 40001) and always fails "flaky" (retryable,
    one retry allowed), fed those two, "fine", and a body that is not an envelope."""
    from conftest import pay_success_spec

    spec = pay_success_spec(pb, base_ms=20, max_retries=1)

    def handler(conn: Any, m: Any, env: Any) -> None:
        if m.order_id == "refused":
            raise mc.NonRetryableError(40001, "business", "order refused")
        if m.order_id == "flaky":
            raise mc.RetryableError(50301, "system", "ledger answered 503")
        record_effect(conn, m, env)

    db = sqlite_db(str(tmp_path / "biz.db"))
    loop = mr.RabbitMQConsumerLoop(url(), "recon", [mc.Consumer(spec, "recon.pay", handler)], db, prefix=prefix)
    pub = mr.RabbitMQPublisher(mr.Config(url(), prefix=prefix))
    for o in ("refused", "flaky", "fine"):
        publish_pay(pub, spec, pb, o)
    pub.publish_raw("order-event", b"\x0a\x01")  # not an envelope
    pub.close()
    wait(lambda: loop.counts.dead_lettered == 3 and loop.counts.processed == 1, loop.step, "3 dead letters")
    return db, loop


def test_dead_letters_and_the_store(tmp_path: pathlib.Path, pb: Any, prefix: str) -> None:
    """Non-retryable, exhausted and undecodable deliveries become dlq.Record JSON messages in P.dlq; the store
    lists them oldest first, leaves the queue as it was, replays one to its group only and purges the rest."""
    db, loop = dead_letter_setup(tmp_path, pb, prefix)
    try:
        raw = drain(url(), prefix + ".dlq", 0)  # nothing taken
        assert raw == []
        store = mr.DeadLetters(url(), prefix=prefix)
        recs = store.list()
        assert len(recs) == 3
        assert [r["id"] for r in recs] == sorted(r["id"] for r in recs)
        assert all(re.fullmatch(r"[0-9a-f]{16}-[0-9a-f]{8}", r["id"]) for r in recs)
        by = {r["reason"]: r for r in recs}
        assert set(by) == {"non_retryable", "retries_exhausted", "decode"}
        nr = by["non_retryable"]
        assert (nr["topic"], nr["group"], nr["handler"], nr["event_type"], nr["code"], nr["attempts"]) == (
            "order-event", "recon", "recon.pay", "PAY_SUCCESS", 40001, 1)
        assert nr["biz_key"] == "order_id:refused:PAY_SUCCESS" and nr["replay_count"] == 0
        assert mc.decode(base64.b64decode(nr["envelope"])).biz_key == nr["biz_key"]
        for k in ("first_failed_at", "last_failed_at", "dead_at"):
            assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", nr[k]), nr[k]
        assert by["retries_exhausted"]["attempts"] == 2 and by["retries_exhausted"]["code"] == 50301
        assert by["decode"]["code"] == mc.consumer.CODE_DECODE and by["decode"]["attempts"] == 0
        assert base64.b64decode(by["decode"]["envelope"]) == b"\x0a\x01"
        assert store.show(nr["id"]) == nr
        assert len(store.list(mr.Filter(reason="decode"))) == 1
        # The message in P.dlq: JSON body, record id as message_id, group and topic headers.
        [(props, body)] = [(p, b) for p, b in drain(url(), prefix + ".dlq", 3) if p.message_id == nr["id"]]
        assert props.content_type == "application/json"
        headers = {k: v for k, v in props.headers.items() if k != "x-delivery-count"}  # the store's scans add it
        assert headers == {"x-msgcontract-group": "recon", "x-msgcontract-topic": "order-event"}
        assert json.loads(body) == nr
    finally:
        loop.close()


def test_replay_and_purge(tmp_path: pathlib.Path, pb: Any, prefix: str) -> None:
    db, loop = dead_letter_setup(tmp_path, pb, prefix)
    try:
        store = mr.DeadLetters(url(), prefix=prefix)
        recs = store.list()
        exhausted = next(r for r in recs if r["reason"] == "retries_exhausted")
        # Another group of the topic must not see the replay.
        other = mr.Connection(mr.Config(url(), prefix=prefix))
        other.declare_group("other", "order-event")
        other.close()
        store.replay(exhausted["id"])
        wait(lambda: loop.counts.dead_lettered == 4, loop.step, "the replay fails again (flaky always fails)")
        after = store.list()
        assert len(after) == 4
        assert exhausted["id"] not in {r["id"] for r in after}
        again = [r for r in after if r["biz_key"] == exhausted["biz_key"]]
        assert sorted(r["replay_count"] for r in again) == [0, 1]
        assert any("last_replayed_at" in r for r in again)
        assert drain(url(), f"{prefix}/other/order-event", 0) == []
        from rmqhelp import queue_depth

        assert queue_depth(url(), f"{prefix}/other/order-event") == 0
        assert store.purge(mr.Filter(reason="decode")) == 1
        assert store.purge() == 3
        assert store.list() == [] and queue_depth(url(), prefix + ".dlq") == 0
        store.close()
    finally:
        loop.close()
    assert effects(db) == (1, 1)


def test_outbox_relay(tmp_path: pathlib.Path, spec: Any, pb: Any, prefix: str) -> None:
    """Rows written in the business transaction are published by outbox.Relay through RabbitMQPublisher
    and handled once by the group."""
    from msgcontract_runtime import outbox

    src = sqlite_db(str(tmp_path / "src.db"))
    outbox.migrate(src)
    for i in range(5):
        outbox.write(src, mc.new_envelope(spec, pb.PaySuccess(order_id=f"ob-{i}", amount=1, currency="EUR")))
    src.commit()
    db = sqlite_db(str(tmp_path / "biz.db"))
    loop = mr.RabbitMQConsumerLoop(url(), "recon", [mc.Consumer(spec, "recon.pay", record_effect)], db,
                                   prefix=prefix)
    pub = mr.RabbitMQPublisher(mr.Config(url(), prefix=prefix))
    try:
        assert outbox.relay_once(src, pub) == 5
        assert outbox.relay_once(src, pub) == 0
        wait(lambda: loop.counts.processed == 5, loop.step, "5 relayed events")
    finally:
        pub.close()
        loop.close()
    assert effects(db) == (5, 5)


def test_config_is_validated() -> None:
    cases = {
        "mqtt://x/": "not an amqp:// or amqps:// URL",
    }
    for u, want in cases.items():
        try:
            mr.Config(u).validate()
        except mr.ConfigError as e:
            assert want in str(e)
        else:
            raise AssertionError(f"{u} accepted")
    for kw, want in ((dict(prefix="a/b"), "prefix 'a/b' contains"), (dict(prefix="a#"), "contains"),
                     (dict(group="g/1", topics=["t"]), "group 'g/1' contains"),
                     (dict(group="g", topics=["t.*"]), "topic 't.*' contains"), (dict(prefetch=70000), "0..65535")):
        try:
            mr.Config("amqp://127.0.0.1/", **kw).validate(consumer=True)
        except mr.ConfigError as e:
            assert want in str(e), (kw, e)
        else:
            raise AssertionError(f"{kw} accepted")


def test_publisher_topology_and_unrouted(prefix: str, spec: Any, pb: Any) -> None:
    """RabbitMQPublisher(topology=...) declares the groups' queues before publishing (a group receives only
    what is published after its queue exists); a topic no queue is bound to lands in P.unrouted."""
    from rmqhelp import queue_depth

    pub = mr.RabbitMQPublisher(mr.Config(url(), prefix=prefix), topology={"order-event": ["billing", "audit"]})
    try:
        publish_pay(pub, spec, pb, "t-1")
        pub.publish("nobody-listens", mc.new_envelope(spec, pb.PaySuccess(order_id="t-2", amount=1, currency="EUR")))
    finally:
        pub.close()
    wait(lambda: queue_depth(url(), f"{prefix}/billing/order-event") == 1, lambda: None, "billing's copy", 10)
    assert queue_depth(url(), f"{prefix}/audit/order-event") == 1
    [(props, body)] = drain(url(), prefix + ".unrouted", 1)
    assert props.headers["x-msgcontract-topic"] == "nobody-listens"
    assert mc.decode(body).biz_key == "order_id:t-2:PAY_SUCCESS"
