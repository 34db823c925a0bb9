"""Fixtures of the RabbitMQ tests: a real node (scripts/with-rabbitmq.sh), the example payment contract.

These tests never skip: without MSGCONTRACT_TEST_RABBITMQ they fail, telling
how to run them (make test-rabbitmq-python). Every test has its own prefix.
"""

from __future__ import annotations

import itertools
import os
import pathlib
import subprocess
import sys
import time
from typing import Any

import pytest

import msgcontract_runtime as mc

ROOT = pathlib.Path(__file__).resolve().parents[2]
_seq = itertools.count()


def url() -> str:
    v = os.environ.get("MSGCONTRACT_TEST_RABBITMQ", "")
    if not v:
        pytest.fail("MSGCONTRACT_TEST_RABBITMQ is not set: run through `make test-rabbitmq-python` "
                    "(scripts/with-rabbitmq.sh starts a throwaway node)")
    return v


def new_prefix() -> str:
    return f"py{time.time_ns() % 1_000_000_000}-{os.getpid()}-{next(_seq)}"


def generate_payment(out: pathlib.Path) -> pathlib.Path:
    """protoc's Python for examples/proto/shop/payment/v1/payment.proto into out."""
    import grpc_tools  # type: ignore[import-untyped]

    wkt = pathlib.Path(grpc_tools.__file__).parent / "_proto"
    out.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "grpc_tools.protoc", f"-I{ROOT / 'examples/proto'}",
                    f"-I{ROOT / 'contracts'}", f"-I{wkt}", f"--python_out={out}", "shop/payment/v1/payment.proto"],
                   check=True)
    for d in ("shop", "shop/payment", "shop/payment/v1"):
        (out / d / "__init__.py").touch()
    return out


@pytest.fixture(scope="session")
def pb(tmp_path_factory: pytest.TempPathFactory) -> Any:
    out = generate_payment(tmp_path_factory.mktemp("gen"))
    sys.path.insert(0, str(out))
    from shop.payment.v1 import payment_pb2  # type: ignore[import-not-found]

    return payment_pb2


def pay_success_spec(pb: Any, base_ms: int = 200, max_retries: int = 3, multiplier: float = 2, jitter_ms: int = 0,
                     max_delay_ms: int = 2000) -> mc.EventSpec[Any]:
    """PaySuccess's contract as generated Python declares it, with a short retry policy for tests."""
    return mc.EventSpec(
        full_name="shop.payment.v1.PaySuccess", topic="order-event", event_type="PAY_SUCCESS",
        biz_key_template="order_id:{order_id}:PAY_SUCCESS",
        retry=mc.RetryPolicy(base_ms=base_ms, multiplier=multiplier, jitter_ms=jitter_ms, max_delay_ms=max_delay_ms,
                             max_retries=max_retries),
        rules=mc.ErrorRules(ranges=[mc.ErrorRange(40000, 49999, False, "business"),
                                    mc.ErrorRange(50000, 59999, True, "system")], unclassified_retryable=True),
        target_state="OrderState.PAID", message_type=pb.PaySuccess,
        key_function=lambda m: f"order_id:{mc.escape(m.order_id)}:PAY_SUCCESS",
    )


@pytest.fixture
def spec(pb: Any) -> mc.EventSpec[Any]:
    return pay_success_spec(pb)


@pytest.fixture
def prefix() -> str:
    return new_prefix()
