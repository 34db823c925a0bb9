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
