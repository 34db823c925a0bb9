"""txcheck on MySQL/MariaDB through PyMySQL (make test-mysql): the check-back's answers from msg_tx_check, as
tests/test_txcheck.py checks them on SQLite and runtime-go's txcheck test on every dialect."""

from __future__ import annotations

from typing import Any

from msgcontract_runtime import txcheck
from msgcontract_runtime.txcheck import Answer
from test_dedup_mysql import conn  # noqa: F401  (conn: the per-test database fixture)

STORED = 1_700_000_000_000
WINDOW = 60_000


def test_check_answers_from_the_table_on_mysql(conn: Any) -> None:  # noqa: F811
    txcheck.migrate(conn)
    txcheck.migrate(conn)  # again: a no-op
    for message_id, commit in (("committed", True), ("rolled-back", False)):
        txcheck.record(conn, message_id, "payment-callback", STORED, "format")
        if commit:
            conn.commit()
        else:
            conn.rollback()
    for message_id, age, want in (
        ("committed", 1000, Answer.COMMIT),
        ("rolled-back", WINDOW - 1, Answer.UNKNOWN),
        ("rolled-back", WINDOW, Answer.ROLLBACK),
        ("", 1000, Answer.ROLLBACK),
    ):
        assert txcheck.check(conn, message_id, STORED, STORED + age, WINDOW, "format") == want, (message_id, age)
    assert txcheck.prune(conn, STORED + txcheck.RETENTION_MS - 1, "format") == 0
    assert txcheck.prune(conn, STORED + txcheck.RETENTION_MS + 1, "format") == 1
    assert txcheck.check(conn, "committed", STORED, STORED + 1000, WINDOW, "format") == Answer.UNKNOWN
