"""Ack only after commit: a worker process SIGKILLed inside a batch's open transaction acked none of the
batch; the next worker gets it all again (x-delivery-count raised) and each effect happens once."""

from __future__ import annotations

import os
import pathlib
import signal
import subprocess
import sys
import time
from typing import Any

from conftest import url
from msgcontract_runtime import rabbitmq as mr
from rmqhelp import effects, publish_pay, sqlite_db

HERE = pathlib.Path(__file__).parent
N = 40


def start(worker: str, prefix: str, db: pathlib.Path, gen: pathlib.Path, hang: str) -> subprocess.Popen[str]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(HERE.parent / "src"), str(HERE)]))
    return subprocess.Popen([sys.executable, str(HERE / worker), url(), prefix, str(db), str(gen), str(N), hang],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def test_sigkill_mid_batch(tmp_path: pathlib.Path, spec: Any, pb: Any, prefix: str) -> None:
    """worker.py: RabbitMQConsumerLoop, batches of 16 in one transaction."""
    kill_and_restart("worker.py", "processed", tmp_path, spec, pb, prefix)


def test_async_sigkill_mid_handler(tmp_path: pathlib.Path, spec: Any, pb: Any, prefix: str) -> None:
    """aio_worker.py: AsyncConsumer on RabbitMQSubscription, 8 handlers in flight when the kill lands."""
    kill_and_restart("aio_worker.py", "handled", tmp_path, spec, pb, prefix)


def kill_and_restart(worker: str, done: str, tmp_path: pathlib.Path, spec: Any, pb: Any, prefix: str) -> None:
    gen = pathlib.Path(pb.__file__).parents[3]
    db_path = tmp_path / "biz.db"
    db = sqlite_db(str(db_path))
    hang = tmp_path / "hanging"
    # The group's queue exists before anything is published: declare it as the worker will.
    c = mr.Connection(mr.Config(url(), prefix=prefix))
    c.declare_member("recon", ["order-event"])
    c.close()
    pub = mr.RabbitMQPublisher(mr.Config(url(), prefix=prefix))
    for i in range(N - 1):
        publish_pay(pub, spec, pb, f"o-{i}")
        if i == 5:
            publish_pay(pub, spec, pb, "o-hang")
    pub.close()
    first = start(worker, prefix, db_path, gen, str(hang))
    end = time.monotonic() + 60
    while not hang.exists():
        assert first.poll() is None, f"the worker stopped before it was killed: {first.communicate()[0]}"
        assert time.monotonic() < end, "the worker never reached o-hang"
        time.sleep(0.05)
    first.send_signal(signal.SIGKILL)
    assert first.wait(30) == -signal.SIGKILL
    at_kill = effects(db)[0]  # what the worker committed before (o-hang's transaction did not)
    assert 0 <= at_kill < N
    second = start(worker, prefix, db_path, gen, "")
    out, _ = second.communicate(timeout=120)
    assert second.returncode == 0, out
    assert effects(db) == (N, N)
    line = [ln for ln in out.splitlines() if ln.startswith("worker: ")][-1]
    processed = int(line.split(done + "=")[1].split()[0])
    assert processed == N - at_kill, out
