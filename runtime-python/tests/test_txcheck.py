"""txcheck on SQLite: the check-back's answers from msg_tx_check, the deadline and the prune (runtime-go's
txcheck_test)."""

from __future__ import annotations

import logging
import pathlib
import sqlite3

import pytest

from msgcontract_runtime import txcheck
from msgcontract_runtime.txcheck import Answer

STORED = 1_700_000_000_000
WINDOW = 60_000


def test_check_answers_from_the_table(tmp_path: pathlib.Path, caplog: pytest.LogCaptureFixture) -> None:
    db = sqlite3.connect(tmp_path / "b.db")
    txcheck.migrate(db)
    txcheck.migrate(db)  # again: a no-op
    # "committed" is recorded in a transaction that commits, "rolled-back" in one that rolls back.
    for message_id, commit in (("committed", True), ("rolled-back", False)):
        txcheck.record(db, message_id, "payment-callback", STORED)
        if commit:
            db.commit()
        else:
            db.rollback()
    assert db.execute("SELECT message_id, topic, created_at FROM msg_tx_check").fetchall() == [
        ("committed", "payment-callback", STORED)]
    for message_id, age, want in (
        ("committed", 1000, Answer.COMMIT),
        ("committed", 3600_000, Answer.COMMIT),
        ("rolled-back", 1000, Answer.UNKNOWN),
        ("rolled-back", WINDOW - 1, Answer.UNKNOWN),
        ("rolled-back", WINDOW, Answer.ROLLBACK),
        ("never-recorded", 2 * WINDOW, Answer.ROLLBACK),
        ("", 1000, Answer.ROLLBACK),
    ):
        got = txcheck.check(db, message_id, STORED, STORED + age, WINDOW)
        assert got == want, f"check({message_id!r}) at {age} ms: {got}, want {want}"
    with pytest.raises(ValueError, match="no message id"):
        txcheck.record(db, "", "t", STORED)
    assert txcheck.deadline(STORED, WINDOW) == STORED + 30_000
    assert txcheck.DEFAULT_UNRESOLVED_MS == WINDOW and txcheck.RETENTION_MS == 24 * 3600 * 1000

    # prune keeps a row younger than RETENTION_MS and deletes an older one.
    assert txcheck.prune(db, STORED + txcheck.RETENTION_MS - 1000) == 0
    assert txcheck.prune(db, STORED + txcheck.RETENTION_MS + 1000) == 1
    assert txcheck.check(db, "committed", STORED, STORED + 1000, WINDOW) == Answer.UNKNOWN, "after prune"

    # A database that fails answers UNKNOWN and logs the error.
    db.close()
    with caplog.at_level(logging.ERROR, logger="msgcontract.txcheck"):
        assert txcheck.check(db, "committed", STORED, STORED, WINDOW) == Answer.UNKNOWN
    assert "look up committed failed" in caplog.text


def test_record_and_prune_name_what_failed(tmp_path: pathlib.Path) -> None:
    db = sqlite3.connect(tmp_path / "b.db")  # not migrated
    with pytest.raises(txcheck.TxCheckError, match=r"record m1 \(did you run txcheck.migrate\?\)"):
        txcheck.record(db, "m1", "t", STORED)
    with pytest.raises(txcheck.TxCheckError, match="txcheck: prune"):
        txcheck.prune(db, STORED)
    with pytest.raises(ValueError, match="paramstyle 'numeric'"):
        txcheck.check(db, "m1", STORED, STORED, WINDOW, paramstyle="numeric")


def test_answer_names_are_the_other_languages() -> None:
    assert [a.value for a in Answer] == ["UNKNOWN", "COMMIT", "ROLLBACK"]
