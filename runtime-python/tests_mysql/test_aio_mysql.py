"""The asyncio consumer's fault tests of tests/test_aio.py on MySQL/MariaDB (aio.mysql, aiomysql).

Run by make test-mysql under scripts/with-mariadb.sh; each test gets a
database of its own. The tests are test_aio.py's, with the database kind
"mysql": a task cancelled mid-handler (every handler inside SELECT SLEEP), a
worker process SIGKILLed mid-batch, a duplicate delivered to two workers at once, a retryable failure then
success, poison. Each runs under conftest.run_async's timeout, which fails
it with every task's stack instead of hanging.
"""

from __future__ import annotations

import secrets
import urllib.parse
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import test_aio
import test_chain
from conftest import arun  # noqa: F401  (the fixture, for this directory)
from test_dedup_mysql import _connect

Run = Callable[..., Any]


@pytest.fixture
def where() -> Iterator[str]:
    """A DSN to a database of the test's own, dropped afterwards."""
    import os

    name = "t_aio_" + secrets.token_hex(6)
    admin = _connect()
    admin.cursor().execute(f"CREATE DATABASE {name} CHARACTER SET utf8mb4")
    u = urllib.parse.urlparse(os.environ["MSGCONTRACT_MYSQL_DSN"])
    try:
        yield urllib.parse.urlunparse(u._replace(path="/" + name))
    finally:
        admin.cursor().execute(f"DROP DATABASE {name}")
        admin.close()


def test_cancelled_mid_handler_rolls_back_and_is_redelivered(arun: Run, tmp_path: Path, where: str) -> None:
    test_aio.test_cancelled_mid_handler_rolls_back_and_is_redelivered(arun, tmp_path, "mysql", where)


def test_sigkill_mid_batch_loses_nothing_and_applies_once(arun: Run, tmp_path: Path, where: str) -> None:
    test_aio.test_sigkill_mid_batch_loses_nothing_and_applies_once(arun, tmp_path, "mysql", where)


def test_duplicate_to_two_workers_at_once(arun: Run, tmp_path: Path, where: str) -> None:
    test_aio.test_duplicate_to_two_workers_at_once(arun, tmp_path, "mysql", where)


def test_retryable_failure_then_success(arun: Run, tmp_path: Path, where: str) -> None:
    test_aio.test_retryable_failure_then_success(arun, tmp_path, "mysql", where)


def test_poison_is_dead_lettered_never_applied(arun: Run, tmp_path: Path, where: str) -> None:
    test_aio.test_poison_is_dead_lettered_never_applied(arun, tmp_path, "mysql", where)


def test_async_advance_walk(arun: Run, where: str) -> None:
    test_chain.test_async_advance_walk(arun, "mysql", where)


def test_async_consumer_keeps_one_chain(arun: Run, where: str) -> None:
    test_chain.test_async_consumer_keeps_one_chain(arun, "mysql", where)
