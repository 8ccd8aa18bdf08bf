"""The transaction-shape reader (grader/checks/txshape.py) on statement lists written by hand."""

from __future__ import annotations

import pytest

from grader.checks import txshape

SELECT = "SELECT id FROM jobs WHERE status = 'pending' ORDER BY id LIMIT 1"
UPDATE = "UPDATE jobs SET status = 'leased' WHERE id = 1 RETURNING id"
QUARANTINE = "UPDATE jobs SET status = 'quarantined' WHERE deadline <= 5"


@pytest.mark.parametrize("statements", [
    ["BEGIN IMMEDIATE", QUARANTINE, SELECT, UPDATE, "COMMIT"],
    ["begin immediate transaction", QUARANTINE, UPDATE, "commit transaction"],
    ["  BEGIN\n IMMEDIATE ;", UPDATE, "END"],
    ["PRAGMA busy_timeout = 10", "BEGIN IMMEDIATE", SELECT, "COMMIT", "SELECT 1"],
    ["BEGIN IMMEDIATE", SELECT, SELECT, "ROLLBACK"],
    ["BEGIN IMMEDIATE", "SAVEPOINT s", UPDATE, "ROLLBACK TO s", "RELEASE s", "COMMIT"],
])
def test_one_immediate_transaction_is_fine(statements):
    assert txshape.problem(statements) is None


@pytest.mark.parametrize("statements, code, at", [
    ([], "no-sql", None),
    (["SELECT 1"], "no-sql", None),
    ([QUARANTINE, SELECT, UPDATE], "no-transaction", 0),
    ([SELECT, "BEGIN IMMEDIATE", UPDATE, "COMMIT"], "outside", 0),
    (["BEGIN IMMEDIATE", SELECT, "COMMIT", UPDATE], "outside", 3),
    (["BEGIN", SELECT, UPDATE, "COMMIT"], "not-immediate", 0),
    (["BEGIN DEFERRED TRANSACTION", SELECT, "COMMIT"], "not-immediate", 0),
    (["SAVEPOINT claim", SELECT, UPDATE, "RELEASE claim"], "not-immediate", 0),
    (["BEGIN EXCLUSIVE", SELECT, UPDATE, "COMMIT"], "exclusive", 0),
    (["BEGIN IMMEDIATE", SELECT, "COMMIT", "BEGIN IMMEDIATE", UPDATE, "COMMIT"], "several", 3),
    (["BEGIN IMMEDIATE", SELECT, UPDATE], "left-open", 2),
    (["BEGIN IMMEDIATE", SELECT, "ROLLBACK TO x"], "left-open", 2),
])
def test_problems_are_found_and_placed(statements, code, at):
    found = txshape.problem(statements)
    assert (found.code, found.at) == (code, at)


def test_the_opening_statement_is_named():
    assert txshape.problem(["BEGIN", SELECT, "COMMIT"]).begin == "BEGIN"


def test_repeats_from_triggers_count_once():
    assert txshape.single_statement([UPDATE, UPDATE, UPDATE])
    assert not txshape.single_statement([SELECT, UPDATE])


def test_listing_marks_the_statement():
    lines = txshape.listing([SELECT, "BEGIN IMMEDIATE"], at=0).splitlines()
    assert lines[0].startswith(f"  {txshape.MARK}  1  SELECT")
    assert lines[1].startswith("     2  BEGIN IMMEDIATE")
    assert txshape.listing(["x" * 500]).endswith("…")
