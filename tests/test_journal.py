"""Spotting, in the SQL a target ran, PRAGMAs that change how its connection waits for others
(grader/harness/judge/journal.py), and the race's reading of a "database is locked" they explain."""

from __future__ import annotations

import pytest

from grader.checks.test_race import shortened_busy_timeout
from grader.harness.judge.journal import busy_timeout_set, switched_to
from lab.store import BUSY_TIMEOUT_MS


def test_a_switch_of_the_journal_mode_is_found_past_comments():
    assert switched_to("PRAGMA journal_mode = WAL") == "wal"
    assert switched_to("-- faster\nPRAGMA main.journal_mode='wal'") == "wal"
    assert switched_to("PRAGMA journal_mode = DELETE") is None
    assert switched_to("PRAGMA journal_mode") is None


@pytest.mark.parametrize("sql, ms", [
    ("PRAGMA busy_timeout = 0", 0), ("pragma main.busy_timeout=10", 10),
    ("/* fail fast */ PRAGMA busy_timeout(250)", 250), ("PRAGMA busy_timeout = -5", 0),
    ("PRAGMA /* fail fast */ busy_timeout = 0", 0), ("PRAGMA busy_timeout -- x\n = 7", 7),
    ("PRAGMA busy_timeout", None), ("SELECT 'PRAGMA busy_timeout = 0'", None),
])
def test_the_busy_timeout_a_statement_sets(sql, ms):
    assert busy_timeout_set(sql) == ms


def raised(*statements: str) -> dict:
    return {"kind": "raised", "locked": True,
            "statements": [[n, sql, None] for n, sql in enumerate(statements, 1)]}


def test_a_lowered_busy_timeout_explains_a_lock_error_of_a_well_shaped_claim():
    cut = shortened_busy_timeout(raised("PRAGMA busy_timeout = 0", "BEGIN IMMEDIATE"))
    assert cut == {"ms": 0, "sql": "PRAGMA busy_timeout = 0", "default": BUSY_TIMEOUT_MS}
    # a deferred transaction that writes first also only waited for the write lock
    assert shortened_busy_timeout(raised("PRAGMA busy_timeout = 0", "BEGIN",
                                         "UPDATE jobs SET status = 'quarantined'"))


def test_a_lock_upgrade_deadlock_is_not_blamed_on_the_busy_timeout():
    assert shortened_busy_timeout(raised("PRAGMA busy_timeout = 0", "BEGIN",
                                         "SELECT id FROM jobs", "UPDATE jobs SET token = 1")) is None
    assert shortened_busy_timeout(raised("BEGIN IMMEDIATE")) is None
    assert shortened_busy_timeout(raised(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}",
                                         "BEGIN IMMEDIATE")) is None


def test_a_pragma_is_read_as_sqlite_reads_it_whatever_its_spelling():
    """`= value` or `(value)`, the name and the value quoted or not, a schema, comments, a sign:
    `PRAGMA journal_mode(wal)` scored 94 where `PRAGMA journal_mode = WAL` scored 83."""
    for sql in ("PRAGMA journal_mode(wal)", 'PRAGMA "journal_mode" = wal',
                "PRAGMA main.journal_mode='WAL'", "PRAGMA [main].[journal_mode] (wal)",
                "PRAGMA /* c */ journal_mode -- c\n = wal;", "pragma `journal_mode`=\"wal\""):
        assert switched_to(sql) == "wal", sql
    for sql in ("PRAGMA journal_mode", "PRAGMA journal_mode = DELETE", "SELECT 'PRAGMA journal_mode=wal'",
                "PRAGMA busy_timeout = 0"):
        assert switched_to(sql) is None, sql
    assert [busy_timeout_set(sql) for sql in ("PRAGMA busy_timeout(-5)", "PRAGMA busy_timeout = +100",
                                              "PRAGMA \"busy_timeout\" = '20'", "PRAGMA busy_timeout",
                                              "PRAGMA busy_timeout = x")] == [0, 100, 20, None, None]
