"""Two outbox relays on one database at once: what the SQLite, PostgreSQL and MySQL tests share."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from typing import Any

from msgcontract.v1 import envelope_pb2
from msgcontract_runtime import outbox


class Recorder:
    """A publisher that records each message id it is given, slowly enough for two relays to overlap,
    and hands the envelope on to inner when set (a real broker)."""

    def __init__(self, inner: outbox.Publisher | None = None, delay_s: float = 0.002) -> None:
        self.inner = inner
        self.delay_s = delay_s
        self.ids: list[str] = []
        self._lock = threading.Lock()

    def publish(self, topic: str, env: envelope_pb2.Envelope) -> None:
        time.sleep(self.delay_s)
        if self.inner is not None:
            self.inner.publish(topic, env)
        with self._lock:
            self.ids.append(env.message_id)


def pending(conn: Any) -> int:
    cur = conn.cursor()
    cur.execute(f"SELECT count(*) FROM {outbox.TABLE} WHERE sent_at = 0")
    n = int(cur.fetchone()[0])
    conn.commit()
    return n


def two_relays_at_once(conns: Sequence[Any], publishers: Sequence[outbox.Publisher], paramstyle: str,
                       limit_s: float = 120) -> list[int]:
    """Runs one Relay per connection, each in its own thread, started together, until no row is
    pending; returns how many rows each relay published."""
    relays = [outbox.Relay(c, p, paramstyle, batch_size=20) for c, p in zip(conns, publishers, strict=True)]
    sent = [0] * len(relays)
    errors: list[BaseException] = []
    start = threading.Barrier(len(relays))
    end = time.monotonic() + limit_s

    def run(i: int) -> None:
        try:
            start.wait()
            while pending(relays[i].conn) > 0:
                if time.monotonic() > end:
                    raise AssertionError(f"rows still pending after {limit_s}s")
                n = relays[i].flush()
                sent[i] += n
                if n == 0:
                    time.sleep(0.01)  # another relay leads
        except BaseException as e:  # reported by the caller's thread
            errors.append(e)
        finally:
            relays[i].release()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(relays))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    return sent
