"""Shared by the asyncio tests: a timeout that fails instead of hanging, and the two databases."""

from __future__ import annotations

import asyncio
import faulthandler
import io
import os
import sys
import threading
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import pytest

T = TypeVar("T")

TIMEOUT_S = float(os.environ.get("MSGCONTRACT_AIO_TEST_TIMEOUT", "60"))
"""How long one asyncio test may run before it fails with every task's stack."""


def task_stacks() -> str:
    """Every task of the running loop with its stack."""
    buf = io.StringIO()
    for t in asyncio.all_tasks():
        buf.write(f"--- {t!r}\n")
        t.print_stack(file=buf)
    return buf.getvalue()


def run_async(main: Callable[[], Awaitable[T]], timeout_s: float = TIMEOUT_S) -> T:
    """Runs main() on a new loop; past timeout_s the test FAILS with every task's stack.

    A loop that is itself blocked (a synchronous call that never returns)
    cannot be interrupted from inside: faulthandler then dumps every thread's
    stack and exits the process, which fails the run rather than hang it.
    """

    async def guarded() -> T:
        task = asyncio.ensure_future(main())
        done, _ = await asyncio.wait({task}, timeout=timeout_s)
        if not done:
            stacks = task_stacks()
            task.cancel()
            await asyncio.wait({task}, timeout=5)
            pytest.fail(f"asyncio test timed out after {timeout_s:.0f}s; tasks:\n{stacks}", pytrace=False)
        return task.result()

    faulthandler.dump_traceback_later(timeout_s + 30, exit=True, file=sys.stderr)
    try:
        return asyncio.run(guarded())
    finally:
        faulthandler.cancel_dump_traceback_later()


_exit_status = [0]


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    _exit_status[0] = int(exitstatus)


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    """Ends the process when a test left a non-daemon thread behind (an aiosqlite connection a
    failed test did not close): the interpreter would otherwise wait for it forever after the
    summary. The threads are named, and the run fails."""
    left = [t for t in threading.enumerate() if t is not threading.main_thread() and not t.daemon]
    deadline = time.monotonic() + 10  # a closed connection's thread ends just after close() returns
    for t in left:
        t.join(max(0.0, deadline - time.monotonic()))
    left = [t for t in left if t.is_alive()]
    if not left:
        return
    sys.stdout.flush()
    sys.stderr.write("conftest: tests left threads that would keep pytest from exiting: "
                     + ", ".join(repr(t) for t in left) + "; close every connection a test opens\n")
    sys.stderr.flush()
    os._exit(_exit_status[0] or 1)


@pytest.fixture
def arun() -> Callable[..., Any]:
    """run_async, for tests."""
    return run_async


def pg_dsn() -> str:
    """The throwaway PostgreSQL of scripts/with-postgres.sh; its absence fails the test, never skips it."""
    dsn = os.environ.get("MSGCONTRACT_PG_DSN", "")
    if not dsn:
        pytest.fail("MSGCONTRACT_PG_DSN is not set: run pytest under scripts/with-postgres.sh", pytrace=False)
    return dsn
