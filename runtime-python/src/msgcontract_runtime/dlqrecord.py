"""The dead-letter record of runtime-go's dlq.Record, as the broker modules store it as JSON.

RabbitMQ (``P.dlq``) and RocketMQ (``msgcontract_dlq``) keep a dead letter as this
record, with Go's JSON field names, so Go, Java and Python stores and
``msgcontract dlq`` read each other's.
"""

from __future__ import annotations

import base64
import datetime
from typing import Any

from msgcontract.v1 import envelope_pb2 as _envelope_pb2
from msgcontract_runtime.consumer import DeadLetter

# Reasons decided before any handler ran: their records count no attempt.
REASONS_BEFORE_HANDLER = ("decode", "no_handler", "schema")


def rfc3339(ms: int) -> str:
    """Unix ms as RFC 3339 UTC with milliseconds, as the records carry times."""
    t = datetime.datetime.fromtimestamp(ms / 1000, tz=datetime.timezone.utc)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def dead_letter_record(topic: str, group: str, handler: str, body: bytes, env: _envelope_pb2.Envelope | None,
                       d: DeadLetter, now_ms: int) -> dict[str, Any]:
    """The dlq.Record of a dead letter, as runtime-go writes it (attempts and first_failed_at as kafka's)."""
    attempts = env.retry_count + 1 if env is not None and d.reason not in REASONS_BEFORE_HANDLER else 0
    first = env.first_failed_at if env is not None and env.first_failed_at > 0 else now_ms
    return {
        "topic": topic, "group": group, "handler": handler,
        "event_type": env.event_type if env is not None else "",
        "biz_key": env.biz_key if env is not None else "",
        "message_id": env.message_id if env is not None else "",
        "envelope": base64.b64encode(body).decode("ascii"),
        "reason": d.reason, "code": d.code, "error": d.error, "attempts": attempts,
        "first_failed_at": rfc3339(first), "last_failed_at": rfc3339(now_ms), "dead_at": rfc3339(now_ms),
        "replay_count": 0,
    }
