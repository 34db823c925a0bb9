"""RocketMQConsumerLoop and RocketMQPublisher on a real broker: effect once, retries on the schedule, dead
letters read by the msgcontract CLI, Go publishing to Python and Python to Go."""

from __future__ import annotations

import pathlib
import subprocess
import time
from typing import Any

import msgcontract_runtime as mc
from conftest import GROUP, env, note_spec, peer, run
from msgcontract_runtime import rocketmq as mq
from rmqhelp import effects, envelope, insert, loop, notes, one_each, sqlite_db, wait


def test_config_names_and_validate() -> None:
    c = mq.Config("127.0.0.1:8081", namespace="ns_")
    c.validate()
    assert [c.topic_name("orders.v1"), c.retry_topic("billing"), c.group_name("billing"), c.dlq_topic()] == \
        ["ns_orders_v1", "ns_billing_retry", "ns_billing", "ns_msgcontract_dlq"]
    assert mq.sanitize("pay.é/\U0001F600:-x") == "pay_____-x"  # one '_' per character, as Go's per rune
    bad = mq.Config("", namespace="a.b", lease_s=5, batch_size=64, db_retry_ms=0)
    try:
        bad.validate()
    except mq.ConfigError as e:
        for want in ("endpoints is required", 'namespace "a.b"', "lease_s 5 is under 10", "batch_size 64 is outside",
                     "db_retry_ms 0 must be positive"):
            assert want in str(e), (want, str(e))
    else:
        raise AssertionError("validate accepted a config with five problems")


def test_duplicates_apply_once(tmp_path: pathlib.Path, cfg: mq.Config) -> None:
    spec = note_spec()
    db = sqlite_db(str(tmp_path / "biz.db"))
    lp = loop(cfg, spec, insert("python"), db)
    pub = mq.RocketMQPublisher(cfg)
    try:
        for i in range(30):
            e = envelope(spec, f"k{i}")
            pub.publish(spec.topic, e)
            if i % 3 == 0:
                pub.publish(spec.topic, e)  # a producer's retry: the same message_id
        wait(lambda: lp.counts.processed == 30 and lp.counts.deduped == 10, lp.step, "30 effects, 10 duplicates")
    finally:
        pub.close()
        lp.close()
    one_each(effects(db), 30)
    assert (lp.counts.retried, lp.counts.dead_lettered, lp.counts.expired) == (0, 0, 0)


def test_retries_on_schedule_then_dead_letters_listed_by_the_cli(tmp_path: pathlib.Path, cfg: mq.Config) -> None:
    spec = note_spec()
    late: list[int] = []
    runs: dict[str, int] = {}

    def handler(conn: Any, m: Any, e: Any) -> None:
        if e.not_before > 0:
            late.append(int(time.time() * 1000) - e.not_before)
        runs[m.value] = runs.get(m.value, 0) + 1
        if m.value.startswith("poison"):
            raise mc.NonRetryableError(40001, "business", "order unknown")
        if m.value.startswith("tired"):
            raise mc.RetryableError(50002, "system", "always down")
        if runs[m.value] <= 2:
            raise mc.RetryableError(50001, "system", "not yet")
        insert("python")(conn, m, e)

    db = sqlite_db(str(tmp_path / "biz.db"))
    lp = loop(cfg, spec, handler, db)
    pub = mq.RocketMQPublisher(cfg)
    poison = envelope(spec, "poison-py")
    try:
        pub.publish(spec.topic, poison)
        pub.publish(spec.topic, envelope(spec, "tired-py"))
        for i in range(3):
            pub.publish(spec.topic, envelope(spec, f"r{i}"))
        wait(lambda: lp.counts.processed == 3 and lp.counts.dead_lettered == 2, lp.step, "3 handled, 2 dead letters")
    finally:
        pub.close()
        lp.close()
    one_each(effects(db), 3)
    assert lp.counts.retried == 3 * 2 + 3, "two retries of each r, the policy's three of tired-py"
    assert late and min(late) >= 0, f"a retry copy ran before its not_before: {sorted(late)}"
    bin_ = env("MSGCONTRACT_BIN")
    ns = env("MSGCONTRACT_ROCKETMQ_NAMESRV")
    out = run([bin_, "dlq", "list", "--rocketmq", ns, "--namespace", cfg.namespace])
    line = next((s for s in out.splitlines() if "non_retryable" in s), "")
    assert "40001" in line and GROUP in line, out
    assert any("retries_exhausted" in s and "50002" in s for s in out.splitlines()), out
    shown = run([bin_, "dlq", "show", "--rocketmq", ns, "--namespace", cfg.namespace, line.split()[0]])
    for want in ("record-effect", "order unknown", "poison-py", poison.message_id):
        assert want in shown, (want, shown)


def test_a_body_that_is_no_envelope_is_dead_lettered(tmp_path: pathlib.Path, cfg: mq.Config) -> None:
    spec = note_spec()
    db = sqlite_db(str(tmp_path / "biz.db"))
    lp = loop(cfg, spec, insert("python"), db)
    pub = mq.RocketMQPublisher(cfg)
    try:
        pub.publish_raw(spec.topic, b"\xff\x01\x02")
        wait(lambda: lp.counts.dead_lettered == 1, lp.step, "the dead letter")
    finally:
        pub.close()
        lp.close()
    assert lp.counts.processed == 0


def test_go_publishes_python_consumes(tmp_path: pathlib.Path, cfg: mq.Config) -> None:
    spec = note_spec()
    db = sqlite_db(str(tmp_path / "biz.db"))
    lp = loop(cfg, spec, insert("python"), db)
    try:
        run(peer(cfg.namespace, "publish", "-n", "20", "-key-prefix", "go-"))
        wait(lambda: lp.counts.processed == 20, lp.step, "20 handled")
    finally:
        lp.close()
    effs = effects(db)
    one_each(effs, 20)
    assert "go-0" in effs and "go-19" in effs


def test_python_publishes_go_consumes(tmp_path: pathlib.Path, cfg: mq.Config) -> None:
    spec = note_spec()
    path = tmp_path / "biz.db"
    db = sqlite_db(str(path))
    with open(tmp_path / "go.log", "w+") as log:
        p = subprocess.Popen(peer(cfg.namespace, "consume", "-db", str(path), "-group", "billing-go", "-handler",
                                  "record-effect", "-note", "go"), stdout=log, stderr=subprocess.STDOUT)
    pub = mq.RocketMQPublisher(cfg)
    try:
        end = time.monotonic() + 60
        while "rocketmqpeer: running" not in (tmp_path / "go.log").read_text():
            assert p.poll() is None, f"the Go member exited: {(tmp_path / 'go.log').read_text()}"
            assert time.monotonic() < end, "the Go member did not start"
            time.sleep(0.05)
        for i in range(20):
            pub.publish(spec.topic, envelope(spec, f"py-{i}"))
        wait(lambda: len(effects(db)) == 20, lambda: time.sleep(0.05), "20 effects by Go")
    finally:
        pub.close()
        p.terminate()
        p.wait(60)
    one_each(effects(db), 20)
    assert notes(db) == {"go"}


def test_a_topic_named_like_a_retry_topic_takes_normal_messages(cfg: mq.Config) -> None:
    """Only a group's retry topic is a DELAY topic: an event topic whose name ends in _retry is created NORMAL
    by the Go peer, so the 5.x client's normal publish is not refused for its message type."""
    spec = note_spec()
    run(peer(cfg.namespace, "topics", "-topic", "audit_retry"))
    pub = mq.RocketMQPublisher(cfg)
    try:
        pub.publish("audit_retry", envelope(spec, "a1"))
    finally:
        pub.close()
