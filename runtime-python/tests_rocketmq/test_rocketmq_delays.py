"""The retry-delay measurement, as runtime-go's TestRetryDelays: 1,000 retries (200 keys, 5 each) under the
schedule 1.1 s base, x1.5, 100 ms jitter, 3 s cap, every copy through the broker's timer (due 1 s, the timer
lead, before its not_before, in the client's whole seconds) and held by the loop until not_before. Prints
observed minus scheduled (handler start minus the copy's not_before); asserts only that no retry ran early."""

from __future__ import annotations

import pathlib
import time
from typing import Any

import msgcontract_runtime as mc
from conftest import note_spec
from msgcontract_runtime import rocketmq as mq
from rmqhelp import effects, envelope, insert, loop, one_each, sqlite_db, wait

KEYS, RETRIES = 200, 5


def test_retry_delays(tmp_path: pathlib.Path, cfg: mq.Config) -> None:
    spec = note_spec(base_ms=1100, multiplier=1.5, jitter_ms=100, max_delay_ms=3000, max_retries=RETRIES)
    late: list[int] = []

    def handler(conn: Any, m: Any, env: Any) -> None:
        if env.not_before > 0:
            late.append(int(time.time() * 1000) - env.not_before)
        if env.retry_count < RETRIES:
            raise mc.RetryableError(50301, "system", f"retry {env.retry_count}")
        insert("python")(conn, m, env)

    db = sqlite_db(str(tmp_path / "biz.db"))
    cfg.max_in_flight = 512
    lp = loop(cfg, spec, handler, db)
    pub = mq.RocketMQPublisher(cfg)
    try:
        for i in range(KEYS):
            pub.publish(spec.topic, envelope(spec, f"k{i}"))
        wait(lambda: lp.counts.processed == KEYS, lambda: lp.step(0.05), "every key through its retries", 300)
    finally:
        pub.close()
        lp.close()
    assert lp.counts.retried == KEYS * RETRIES
    one_each(effects(db), KEYS)
    assert len(late) == KEYS * RETRIES
    late.sort()

    def q(p: float) -> int:
        return late[int(p * (len(late) - 1))]

    within = sum(1 for v in late if abs(v) <= 50)
    line = (f"python-rocketmq-retry-delays: n={len(late)} p50=+{q(0.5)}ms p99=+{q(0.99)}ms max=+{late[-1]}ms "
            f"min={late[0]:+d}ms within ±50ms: {within} of {len(late)} (schedule base 1.1s x1.5 jitter 100ms cap "
            "3s, timer lead 1s; handler start minus not_before)")
    print(line)
    assert late[0] >= 0, f"a retry ran {-late[0]} ms before its not_before: {line}"
