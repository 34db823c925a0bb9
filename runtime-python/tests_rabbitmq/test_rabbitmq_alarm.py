"""A memory alarm (rabbitmqctl set_vm_memory_high_watermark on the test node): publishes fail quickly with an
error naming the alarm instead of hanging, a consumer's retry leaves its delivery unacknowledged and the
loop keeps consuming; once the alarm clears, publishing and the retry go through."""

from __future__ import annotations

import os
import pathlib
import subprocess
import time
from typing import Any

import pytest

import msgcontract_runtime as mc
from conftest import url
from msgcontract_runtime import rabbitmq as mr
from rmqhelp import publish_pay, sqlite_db, wait


def ctl(*args: str) -> None:
    """rabbitmqctl against the node of $MSGCONTRACT_RABBITMQ_DIR (scripts/rabbitmq-start.sh's layout)."""
    d = os.environ.get("MSGCONTRACT_RABBITMQ_DIR", "")
    if not d:
        pytest.fail("MSGCONTRACT_RABBITMQ_DIR is not set: run through `make test-rabbitmq-python` "
                    "(scripts/with-rabbitmq.sh)")
    ports = pathlib.Path(d, "ports").read_text().split()
    node = f"msgcontract-test-{ports[0]}@localhost"
    env = dict(os.environ, HOME=str(pathlib.Path(d, "home")), RABBITMQ_NODENAME=node, ERL_EPMD_PORT=ports[2],
               RABBITMQ_CONF_ENV_FILE=str(pathlib.Path(d, "rabbitmq-env.conf")))
    subprocess.run(["/usr/lib/rabbitmq/bin/rabbitmqctl", "-n", node, *args], env=env, check=True,
                   capture_output=True, timeout=60)


def test_memory_alarm(tmp_path: pathlib.Path, spec: Any, pb: Any, prefix: str) -> None:
    calls: list[int] = []

    def handler(conn: Any, m: Any, env: Any) -> None:
        calls.append(env.retry_count)
        if env.retry_count == 0:
            raise mc.RetryableError(50301, "system", "ledger answered 503")

    db = sqlite_db(str(tmp_path / "biz.db"))
    loop = mr.RabbitMQConsumerLoop(url(), "recon", [mc.Consumer(spec, "recon.pay", handler)], db, prefix=prefix)
    pub = mr.RabbitMQPublisher(mr.Config(url(), prefix=prefix, publish_timeout_s=5))
    publish_pay(pub, spec, pb, "before")
    wait(lambda: loop.counts.retried == 1 and loop.counts.processed == 1, loop.step, "a retry, then success")
    ctl("set_vm_memory_high_watermark", "absolute", "1MB")
    try:
        err: Exception | None = None
        end = time.monotonic() + 30
        while err is None:
            assert time.monotonic() < end, "publishes still succeed 30 s into the alarm"
            try:
                publish_pay(pub, spec, pb, "during")
            except mr.RabbitMQError as e:
                err = e
        assert "blocks the connection" in str(err) and "memory" in str(err).lower(), err
        began = time.monotonic()
        with pytest.raises(mr.RabbitMQError, match="blocks the connection"):
            publish_pay(pub, spec, pb, "during")
        assert time.monotonic() - began < 2, "a publish under the alarm hung"
        # The loop: "during" (if it was published before the alarm blocked) or nothing; it keeps stepping.
        for _ in range(10):
            loop.step(0.05)
    finally:
        ctl("set_vm_memory_high_watermark", "absolute", "2GiB")
    end = time.monotonic() + 30
    while True:
        try:
            publish_pay(pub, spec, pb, "after")
            break
        except mr.RabbitMQError:
            assert time.monotonic() < end, "publishes still fail 30 s after the alarm cleared"
            time.sleep(0.2)
    pub.close()
    wait(lambda: calls.count(1) >= 2, loop.step, "the retry of 'after' (and of 'during' if it got through)")
    loop.close()
