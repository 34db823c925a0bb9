"""A KafkaConsumerLoop process, and an AsyncConsumer one, SIGKILLed mid-batch and restarted: nothing applied twice,
nothing lost."""

from __future__ import annotations

import os
import pathlib
import signal
import subprocess
import sys
import time
from typing import Any

from conftest import brokers, generate_payment
from kafkahelp import effects, publish_pay, sqlite_db
from msgcontract_runtime import kafka as mk

N = 300


def test_sigkill_mid_batch(tmp_path: pathlib.Path, spec: Any, pb: Any, ns: str) -> None:
    kill_and_restart("worker.py", tmp_path, spec, pb, ns)


def test_async_sigkill_mid_batch(tmp_path: pathlib.Path, spec: Any, pb: Any, ns: str) -> None:
    """aio_worker.py: AsyncConsumer on KafkaSubscription, 8 handlers in flight when the kill lands."""
    kill_and_restart("aio_worker.py", tmp_path, spec, pb, ns)


def kill_and_restart(worker: str, tmp_path: pathlib.Path, spec: Any, pb: Any, ns: str) -> None:
    """Runs worker, kills it with SIGKILL well into its work, runs it again to the end."""
    b = brokers()
    gen = generate_payment(tmp_path / "gen")
    db_path = str(tmp_path / "biz.db")
    db = sqlite_db(db_path)
    pub = mk.KafkaPublisher(b, namespace=ns, partitions=2)
    for i in range(N):
        publish_pay(pub, spec, pb, f"o-{i}")
    pub.close()
    here = pathlib.Path(__file__).parent
    path = [str(here), str(here.parent / "src"), os.environ.get("PYTHONPATH", "")]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(path))
    cmd = [sys.executable, str(here / worker), b, ns, db_path, str(gen), str(N)]

    first = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, text=True)
    end = time.monotonic() + 120
    while effects(db)[0] < 40:  # well into its work, not done
        assert first.poll() is None, "the worker stopped before it was killed"
        assert time.monotonic() < end, "the worker applied nothing within 120s"
        time.sleep(0.05)
    first.send_signal(signal.SIGKILL)
    assert first.wait(30) == -signal.SIGKILL, "the kill happened"
    at_kill = effects(db)[0]
    assert 0 < at_kill < N

    second = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, text=True, timeout=300)
    assert second.returncode == 0
    assert effects(db) == (N, N), "every event applied exactly once"
    line = second.stdout.strip().splitlines()[-1]
    processed = int(line.split("processed=")[1].split()[0])
    assert processed == N - at_kill
