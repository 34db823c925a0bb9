"""The retry-delay measurement, as runtime-go's TestRetryDelays: 1,000 retries (25 messages failing 40
times each) under the schedule 20 ms base, x2, 10 ms jitter, 200 ms cap, through RabbitMQConsumerLoop and
the delay queues. Prints observed minus scheduled (handler start minus the copy's not_before); asserts only
that no retry ran early."""

from __future__ import annotations

import pathlib
from typing import Any

import msgcontract_runtime as mc
from conftest import pay_success_spec, url
from msgcontract_runtime import rabbitmq as mr
from rmqhelp import publish_pay, sqlite_db, wait

KEYS, RETRIES = 25, 40


def test_retry_delays(tmp_path: pathlib.Path, pb: Any, prefix: str) -> None:
    spec = pay_success_spec(pb, base_ms=20, multiplier=2, jitter_ms=10, max_delay_ms=200, max_retries=RETRIES)
    late: list[int] = []

    def handler(conn: Any, m: Any, env: Any) -> None:
        if env.not_before > 0:
            late.append(mr._now_ms() - env.not_before)
        raise mc.RetryableError(50301, "system", "always fails")

    db = sqlite_db(str(tmp_path / "biz.db"))
    loop = mr.RabbitMQConsumerLoop(url(), "g", [mc.Consumer(spec, "h", handler)], db, prefix=prefix)
    pub = mr.RabbitMQPublisher(mr.Config(url(), prefix=prefix))
    for i in range(KEYS):
        publish_pay(pub, spec, pb, f"k{i}")
    pub.close()
    try:
        wait(lambda: loop.counts.dead_lettered == KEYS, lambda: loop.step(0.05), "every key exhausted", 300)
    finally:
        loop.close()
    assert loop.counts.retried == KEYS * RETRIES
    assert len(late) == KEYS * RETRIES
    late.sort()

    def q(p: float) -> int:
        return late[int(p * (len(late) - 1))]

    within = sum(1 for v in late if abs(v) <= 50)
    line = (f"python-rabbitmq-retry-delays: n={len(late)} p50=+{q(0.5)}ms p99=+{q(0.99)}ms max=+{late[-1]}ms "
            f"min={late[0]:+d}ms within ±50ms: {within} of {len(late)}")
    print(line)
    assert late[0] >= 0, f"a retry ran {-late[0]} ms before its not_before: {line}"
