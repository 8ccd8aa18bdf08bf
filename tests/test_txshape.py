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
    (["BEGIN IMMEDIATE", SELECT, "COMMIT", UPDATE], "write-outside", 3),
    ([QUARANTINE, "BEGIN IMMEDIATE", SELECT, UPDATE, "COMMIT"], "write-outside", 0),
    (["BEGIN IMMEDIATE", UPDATE, "COMMIT", "SELECT qty FROM jobs"], "read-after", 3),  # not "before"
    (["BEGIN", SELECT, UPDATE, "COMMIT"], "not-immediate", 0),
    (["BEGIN DEFERRED TRANSACTION", SELECT, UPDATE, "COMMIT"], "not-immediate", 0),
    (["SAVEPOINT claim", SELECT, UPDATE, "RELEASE claim"], "not-immediate", 0),
    (["BEGIN EXCLUSIVE", SELECT, UPDATE, "COMMIT"], "exclusive", 0),
    (["BEGIN IMMEDIATE", SELECT, "COMMIT", "BEGIN IMMEDIATE", UPDATE, "COMMIT"], "several", 3),
    (["BEGIN IMMEDIATE", SELECT, UPDATE], "left-open", 2),
    (["BEGIN IMMEDIATE", SELECT, UPDATE, "ROLLBACK TO x"], "left-open", 3),
])
def test_problems_are_found_and_placed(statements, code, at):
    found = txshape.problem(statements)
    assert (found.code, found.at) == (code, at)


def comment(sql: str) -> str:
    return f"-- what this does\n/* and why */ {sql}"


def test_statements_are_read_past_their_leading_comments():
    assert txshape.problem([comment(s) for s in
                            ("BEGIN IMMEDIATE", QUARANTINE, SELECT, UPDATE, "COMMIT")]) is None
    found = txshape.problem([comment(SELECT), "BEGIN IMMEDIATE", UPDATE, "COMMIT"])
    assert (found.code, found.at) == ("outside", 0)
    assert txshape.problem([comment("BEGIN"), SELECT, UPDATE, comment("END")]).code \
        == "not-immediate"
    assert txshape.problem(["-- jobs are picked here\nSELECT 1"]).code == "no-sql"


def test_a_comment_inside_begin_is_whitespace():
    # SQLite reads `BEGIN -- note\n IMMEDIATE` as BEGIN IMMEDIATE: it takes the write lock
    for begin in ("BEGIN -- note\n IMMEDIATE", "BEGIN /* note */ IMMEDIATE"):
        assert txshape.opening(begin) == "IMMEDIATE"
        assert txshape.problem([begin, QUARANTINE, SELECT, UPDATE, "COMMIT"]) is None
    assert txshape.opening("BEGIN /* IMMEDIATE */") == "DEFERRED"
    assert txshape.problem(["BEGIN IMMEDIATE", SELECT, UPDATE, "ROLLBACK /* x */ TO s",
                            "COMMIT"]) is None
    found = txshape.problem(["BEGIN -- IMMEDIATE\n", SELECT, UPDATE, "COMMIT"])
    assert found.code == "not-immediate" and found.begin == "BEGIN /* IMMEDIATE */"


@pytest.mark.parametrize("extra", [
    "SELECT sqlite_version()  -- RETURNING on jobs needs 3.35",
    "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'jobs'",
    "/* jobs */ SELECT 1 /* on jobs */",
    "PRAGMA table_info(jobs)",
    "pragma main.table_info('jobs')",
])
def test_a_statement_that_only_mentions_jobs_is_not_on_jobs(extra):
    # the word in a comment or a string literal is no name of the table, and a PRAGMA reads the
    # schema, never a row: such a statement may run anywhere
    assert not txshape.on_jobs(extra)
    assert txshape.problem([extra, "BEGIN IMMEDIATE", QUARANTINE, SELECT, UPDATE, "COMMIT",
                            extra]) is None
    assert txshape.problem([extra, UPDATE]) is None  # finish: one statement on jobs
    assert txshape.problem([extra]).code == "no-sql"


def test_a_quoted_name_of_jobs_is_on_jobs():
    for sql in ('SELECT id FROM "jobs"', "SELECT id FROM main.[jobs]", "DELETE FROM `Jobs`"):
        assert txshape.on_jobs(sql)
    found = txshape.problem(['SELECT id FROM "jobs" -- pick', UPDATE])
    assert (found.code, found.at) == ("no-transaction", 0)


def test_the_opening_statement_is_named():
    assert txshape.problem(["BEGIN", SELECT, UPDATE, "COMMIT"]).begin == "BEGIN"


@pytest.mark.parametrize("statements", [[UPDATE], ["BEGIN", UPDATE, "COMMIT"], ["BEGIN", SELECT]])
def test_a_lone_statement_is_atomic_however_wrapped(statements):
    assert txshape.problem(statements) is None


def test_repeats_from_triggers_count_once():
    assert txshape.problem([UPDATE, UPDATE, UPDATE]) is None
    assert txshape.problem([SELECT, UPDATE]).code == "no-transaction"


def test_no_sql_is_a_problem_only_when_sql_is_needed():
    assert txshape.problem(["SELECT 1"], need_sql=False) is None


def test_listing_marks_the_statement():
    lines = txshape.listing([SELECT, "BEGIN IMMEDIATE"], at=0).splitlines()
    assert lines[0].startswith(f"  {txshape.MARK}  1  SELECT")
    assert lines[1].startswith("     2  BEGIN IMMEDIATE")
    assert txshape.listing(["x" * 500]).endswith("…")
