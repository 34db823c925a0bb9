"""Fixtures of the RocketMQ tests: a real broker and proxy (scripts/with-rocketmq.sh), the Go peer.

These tests never skip: without MSGCONTRACT_ROCKETMQ_PROXY (and the peer's
MSGCONTRACT_ROCKETMQ_GO_PEER) they fail, telling how to run them (make
test-rocketmq-python). Every test has its own namespace, whose topics the Go
peer creates: RocketMQ's 5.x clients cannot.
"""

from __future__ import annotations

import os
import subprocess
import time
from typing import Any

import pytest
from google.protobuf import wrappers_pb2

import msgcontract_runtime as mc
from msgcontract_runtime import rocketmq as mq

TOPIC = "orders"
GROUP = "billing"
EVENT_TYPE = "ORDER_PAID"
HANDLER = "record-effect"
FIFO_TOPIC = "orders_fifo"  # a FIFO topic (message type FIFO) in every test's namespace of fifo_cfg
FIFO_GROUP = "billing_fifo"  # an orderly consumer group, with the non-orderly group its retry topic is read as


def env(name: str) -> str:
    v = os.environ.get(name, "")
    if not v:
        pytest.fail(f"{name} is not set: run through `make test-rocketmq-python` (scripts/with-rocketmq.sh starts "
                    "a throwaway broker; the make target builds the Go peer and the CLI)")
    return v


def note_spec(base_ms: int = 200, multiplier: float = 2, jitter_ms: int = 100, max_delay_ms: int = 2000,
              max_retries: int = 3, topic: str = TOPIC, event_type: str = EVENT_TYPE) -> mc.EventSpec[Any]:
    """The suite's event: a google.protobuf.StringValue whose value is the biz_key, as the Java suite and the
    Go peer (integration/rocketmqmembers/rocketmqpeer) declare it."""
    return mc.EventSpec(
        full_name="google.protobuf.StringValue", topic=topic, event_type=event_type, biz_key_template="{value}",
        retry=mc.RetryPolicy(base_ms=base_ms, multiplier=multiplier, jitter_ms=jitter_ms, max_delay_ms=max_delay_ms,
                             max_retries=max_retries),
        rules=mc.ErrorRules(ranges=[mc.ErrorRange(40000, 49999, False, "business"),
                                    mc.ErrorRange(50000, 59999, True, "system")], unclassified_retryable=True),
        target_state="", message_type=wrappers_pb2.StringValue, key_function=lambda m: m.value,
    )


def peer(namespace: str, mode: str, *more: str) -> list[str]:
    return [env("MSGCONTRACT_ROCKETMQ_GO_PEER"), mode, "-namesrv", env("MSGCONTRACT_ROCKETMQ_NAMESRV"), "-broker",
            env("MSGCONTRACT_ROCKETMQ_BROKER"), "-namespace", namespace, "-topic", TOPIC, "-event-type", EVENT_TYPE,
            *more]


def run(cmd: list[str]) -> str:
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, f"{' '.join(cmd)}: exit {p.returncode}\n{p.stdout}{p.stderr}"
    return p.stdout


@pytest.fixture
def namespace() -> str:
    """A fresh namespace with the suite's topic, GROUP's retry topic and the dead-letter topics."""
    ns = f"p{time.time_ns() % 10_000_000_000:010d}_"
    run(peer(ns, "topics", "-group", GROUP))
    return ns


@pytest.fixture
def cfg(namespace: str) -> mq.Config:
    return mq.Config(env("MSGCONTRACT_ROCKETMQ_PROXY"), namespace=namespace, lease_s=10, await_s=1)


@pytest.fixture
def fifo_cfg(namespace: str) -> mq.Config:
    """cfg with FIFO_TOPIC a FIFO topic, and FIFO_GROUP created orderly with its retry topic's group."""
    run(peer(namespace, "topics", "-fifo-topic", FIFO_TOPIC, "-fifo-group", FIFO_GROUP))
    return mq.Config(env("MSGCONTRACT_ROCKETMQ_PROXY"), namespace=namespace, lease_s=10, await_s=1,
                     fifo_topics=[FIFO_TOPIC], fifo_groups=[FIFO_GROUP])
