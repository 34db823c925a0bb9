"""The retry-delay measurement, as runtime-go's TestRetryDelays: 1,000 retries (200 keys, 5 each) under the
schedule 1.1 s base, x1.5, 100 ms jitter, 3 s cap, every copy through the broker's timer (due 1 s, the timer
lead, before its not_before, in the client's whole seconds) and held by the loop until not_before. Prints
observed minus scheduled (handler start minus the copy's not_before) and, as Java's test does, when the loop had
the copy ready (released from its hold to run, as Go measures at Fetch) minus its not_before; asserts only that no
retry ran early. The loop thread's and the process's CPU per delivery are printed too: the client's threads
(gRPC, callbacks) share the interpreter with the loop, so a machine short of CPU delays both."""

from __future__ import annotations

import pathlib
import time
from typing import Any

import msgcontract_runtime as mc
from conftest import note_spec
from msgcontract_runtime import rocketmq as mq
from msgcontract_runtime.consumer import RoutedRun
from rmqhelp import effects, envelope, insert, one_each, sqlite_db, wait

KEYS, RETRIES = 200, 5


class Timed(mq.RocketMQConsumerLoop):
    """The loop, noting for each retry copy when it arrived and when it was released to run, minus its
    not_before: a copy late on arrival is the broker's timer; late only when released, the loop's own work."""

    ready: list[int]
    arrived: list[int]
    cpu_s: float  # the loop thread's CPU time in step, every turn's

    def step(self, poll_timeout_s: float = 0.2) -> None:
        t = time.thread_time()
        try:
            super().step(poll_timeout_s)
        finally:
            self.cpu_s += time.thread_time() - t

    def _queue_up(self, d: mq.Delivery, name: str) -> bool:
        if d.not_before > 0:
            self.arrived.append(self.clock_ms() - d.not_before)
        return super()._queue_up(d, name)

    def _run_due(self, ds: list[mq.Delivery]) -> RoutedRun[mq.Delivery]:
        now = self.clock_ms()
        self.ready.extend(now - d.not_before for d in ds if d.not_before > 0)
        return super()._run_due(ds)


def summary(late: list[int], what: str) -> str:
    late = sorted(late)

    def q(p: float) -> int:
        return late[int(p * (len(late) - 1))]

    within = sum(1 for v in late if abs(v) <= 50)
    return (f"n={len(late)} p50=+{q(0.5)}ms p99=+{q(0.99)}ms max=+{late[-1]}ms min={late[0]:+d}ms within ±50ms: "
            f"{within} of {len(late)} (schedule base 1.1s x1.5 jitter 100ms cap 3s, timer lead 1s; {what})")


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
    lp = Timed(cfg, "billing", [mc.Consumer(spec, "record-effect", handler)], db)
    lp.ready, lp.arrived, lp.cpu_s = [], [], 0.0
    pub = mq.RocketMQPublisher(cfg)
    cpu0 = time.process_time()
    try:
        for i in range(KEYS):
            pub.publish(spec.topic, envelope(spec, f"k{i}"))
        wait(lambda: lp.counts.processed == KEYS, lambda: lp.step(0.05), "every key through its retries", 300)
        cpu = time.process_time() - cpu0
    finally:
        pub.close()
        lp.close()
    assert lp.counts.retried == KEYS * RETRIES
    one_each(effects(db), KEYS)
    assert len(late) == KEYS * RETRIES
    assert len(lp.ready) >= KEYS * RETRIES, f"retry copies ready: {len(lp.ready)}"
    line = summary(late, "handler start minus not_before")
    print("python-rocketmq-retry-delays: " + line)
    late_arrivals = sum(1 for v in lp.arrived if v > 0)
    per = 1000 / (KEYS * (RETRIES + 1))  # seconds of CPU to ms per delivery
    print("python-rocketmq-retry-delays-ready: " + summary(
        lp.ready, f"ready in the loop minus not_before, as Go's at Fetch; {late_arrivals} of {len(lp.arrived)} "
                  f"copies arrived after their not_before, the earliest {-max(lp.arrived)} ms before it; CPU per "
                  f"delivery {lp.cpu_s * per:.2f} ms in the loop's thread, {cpu * per:.2f} ms in the process"))
    assert min(late) >= 0, f"a retry ran {-min(late)} ms before its not_before: {line}"
    assert min(lp.ready) >= 0, f"a retry copy was released {-min(lp.ready)} ms before its not_before"
