"""The business database's side of a broker's transactional (half) messages, the outbox's alternative on
RocketMQ (rocketmq.RocketMQTxProducer); runtime-go's txcheck.

The producer stores a half message the broker withholds from consumers, runs
the business transaction and commits or rolls the message back. ``record``
writes the message id in that business transaction, so the row exists exactly
when the business change commits; when the producer's verdict does not reach
the broker (a crash, a lost request), the broker asks a producer of the same
topic again, and ``check`` answers from the row. The rule, the same in Go,
Java and Python:

- a row for the message id: COMMIT;
- no row, and the half message is younger than the unresolved window: UNKNOWN
  (the broker asks again later);
- no row, and older: ROLLBACK.

ROLLBACK is safe only if no business transaction commits its row after the
window: a producer commits only while less than half the window has passed
since the half message was stored (``deadline``), and rolls back otherwise.
The table is contracts/sql's msg_tx_check (``migrate``); SQLite, PostgreSQL
and MySQL/MariaDB connections are supported, as by the outbox.
"""

from __future__ import annotations

import enum
import logging
from typing import Any

from msgcontract_runtime import ddl
from msgcontract_runtime.outbox import placeholder

log = logging.getLogger("msgcontract.txcheck")

TABLE = "msg_tx_check"
"""The check-back table, shared with the Go and Java runtimes."""

DEFAULT_UNRESOLVED_MS = 60_000
"""The default unresolved window: how long after storing a half message a check-back without a row still
answers UNKNOWN."""

RETENTION_MS = 24 * 3600 * 1000
"""How long a row is kept: once the broker has the verdict (its check-backs stop after transactionCheckMax
tries, 15 by default, transactionCheckInterval apart, 30 s by default), a row answers nothing."""


class Answer(str, enum.Enum):
    """A check-back's verdict on a half message, identical in every language."""

    UNKNOWN = "UNKNOWN"
    """Ask again later."""
    COMMIT = "COMMIT"
    """Deliver the message."""
    ROLLBACK = "ROLLBACK"
    """Discard the message."""


class TxCheckError(Exception):
    """A statement on the check-back table that failed; the message says which and what to check."""


def migrate(conn: Any, postgres: bool = False) -> None:
    """Creates msg_tx_check if missing, and commits.

    The statements are contracts/sql's (ddl.statements). A MySQL connection
    is recognized by its driver; postgres=True selects PostgreSQL's, else
    SQLite's (as outbox.migrate).
    """
    ddl.create(conn, postgres, TABLE)


def record(tx_conn: Any, message_id: str, topic: str, now_ms: int, paramstyle: str = "qmark") -> None:
    """Writes message_id (the envelope's message id) and its msgcontract topic in tx_conn's current
    transaction, the business transaction of the half message; the caller commits it with the business change.

    ValueError for an empty message id (nothing could answer for it); TxCheckError when the INSERT fails.
    """
    if not message_id:
        raise ValueError("txcheck: the half message has no message id; build its envelope with new_envelope")
    p = placeholder(paramstyle)
    try:
        tx_conn.cursor().execute(f"INSERT INTO {TABLE} (message_id, topic, created_at) VALUES ({p}, {p}, {p})",
                                 (message_id, topic, now_ms))
    except Exception as e:  # the driver's error: named, with the likeliest cause
        raise TxCheckError(f"txcheck: record {message_id} (did you run txcheck.migrate?): {e!r}") from e


def deadline(stored_ms: int, unresolved_ms: int) -> int:
    """When (Unix ms) a producer stops committing the business transaction of a half message stored at
    stored_ms: half the unresolved window later."""
    return stored_ms + unresolved_ms // 2


def check(conn: Any, message_id: str, stored_ms: int, now_ms: int, unresolved_ms: int,
          paramstyle: str = "qmark") -> Answer:
    """Answers the broker's check-back for the half message message_id, stored at stored_ms (the message's
    born time), at now_ms, by the rule above. A database error is logged and answers UNKNOWN: the broker asks
    again."""
    if not message_id:
        # Not an envelope of ours: nothing will ever record it.
        return Answer.ROLLBACK
    p = placeholder(paramstyle)
    try:
        cur = conn.cursor()
        cur.execute(f"SELECT 1 FROM {TABLE} WHERE message_id = {p}", (message_id,))
        found = cur.fetchone() is not None
        conn.commit()  # ends the read's transaction, as the outbox relay's reads
    except Exception as e:  # the database: the broker asks again
        log.error("msgcontract: txcheck: look up %s failed; answering UNKNOWN, the broker asks again: %r",
                  message_id, e)
        return Answer.UNKNOWN
    if found:
        return Answer.COMMIT
    if now_ms - stored_ms < unresolved_ms:
        return Answer.UNKNOWN
    return Answer.ROLLBACK


def prune(conn: Any, now_ms: int, paramstyle: str = "qmark") -> int:
    """Deletes the rows written more than RETENTION_MS before now_ms, commits, and returns how many.
    A producer calls it now and then; TxCheckError when the DELETE fails."""
    p = placeholder(paramstyle)
    try:
        cur = conn.cursor()
        cur.execute(f"DELETE FROM {TABLE} WHERE created_at < {p}", (now_ms - RETENTION_MS,))
        n = cur.rowcount
        conn.commit()
    except Exception as e:  # the driver's error, named
        raise TxCheckError(f"txcheck: prune: {e!r}") from e
    return int(n)
