"""What the gates read off a statement (grader/harness/judge/interleave.py) and the write-lock watch,
without processes. (The gate itself, in the judge, is tested in test_statement_gate.py; the race's
schedules in test_explore.py.)"""

from __future__ import annotations

import sqlite3

from grader.harness.judge.interleave import (WriteLockWatch, bare, changes_database, is_statement,
                                             sql_line, takes_write_lock, verb, waits_for_write_lock,
                                             words)


def test_which_statements_wait_for_another_connections_write_lock():
    assert waits_for_write_lock("BEGIN IMMEDIATE", holds_write=False)
    assert waits_for_write_lock("UPDATE jobs SET x = 1", holds_write=False)
    assert not waits_for_write_lock("UPDATE jobs SET x = 1", holds_write=True)
    assert not waits_for_write_lock("BEGIN", holds_write=False)
    assert not waits_for_write_lock("SELECT 1", holds_write=False)
    assert not waits_for_write_lock("COMMIT", holds_write=False)
    assert not waits_for_write_lock("ROLLBACK", holds_write=False)


def test_which_statements_may_take_the_write_lock():
    assert takes_write_lock("BEGIN IMMEDIATE") and takes_write_lock("begin exclusive transaction")
    assert takes_write_lock("UPDATE jobs SET x = 1") and takes_write_lock("WITH t AS (...) UPDATE")
    assert not takes_write_lock("BEGIN") and not takes_write_lock("BEGIN DEFERRED")
    assert not takes_write_lock("  select 1")
    assert is_statement("SELECT 1") and not is_statement("-- TRIGGER t")


def test_a_statement_is_read_past_its_leading_comments():
    # SQLite skips them: a statement that opens with a comment is the statement after it
    assert bare("-- take the lock first\n  /* then read */ BEGIN IMMEDIATE") == "BEGIN IMMEDIATE"
    assert bare("/* unclosed") == "" and bare("SELECT 1 -- trailing") == "SELECT 1 -- trailing"
    assert is_statement("-- why\nSELECT 1") and is_statement("/* a */ COMMIT")
    assert not is_statement("-- TRIGGER t") and not is_statement("  /* only */ -- comments")
    assert verb("-- claim\nupdate jobs SET x = 1") == "UPDATE"
    assert takes_write_lock("/* lock */ BEGIN IMMEDIATE")
    assert takes_write_lock("-- quarantine\nUPDATE jobs SET x = 1")
    assert not takes_write_lock("-- pick\nSELECT id FROM jobs")
    assert waits_for_write_lock("-- x\nBEGIN IMMEDIATE", holds_write=False)
    assert not waits_for_write_lock("/* end */ COMMIT", holds_write=False)
    assert changes_database("-- done\nCOMMIT") and not changes_database("-- a\nBEGIN IMMEDIATE")


def test_which_statements_may_change_the_database():
    # the crash check's kill points: after a write or a COMMIT, never after a BEGIN or a read
    assert changes_database("UPDATE jobs SET x = 1") and changes_database("commit")
    assert changes_database("WITH t AS (...) UPDATE") and changes_database("ROLLBACK")
    assert not changes_database("BEGIN IMMEDIATE") and not changes_database("begin exclusive")
    assert not changes_database("BEGIN") and not changes_database("  select 1")
    assert not changes_database("") and not changes_database("VALUES (1)")


def watched(conn, watch, sqls):
    """Run `sqls` on `conn`, asking `watch` before each statement as the target server does."""
    seen = []

    def trace(sql):
        if is_statement(sql):
            seen.append((sql, watch.before(sql, conn.in_transaction)))
    conn.set_trace_callback(trace)
    for sql in sqls:
        conn.execute(sql)
    conn.set_trace_callback(None)
    return seen


def test_the_watch_says_when_a_statement_runs_holding_the_write_lock(tmp_path):
    conn = sqlite3.connect(tmp_path / "db", isolation_level=None)
    seen = watched(conn, WriteLockWatch(), (
        "BEGIN IMMEDIATE", "SELECT 1", "COMMIT", "BEGIN", "SELECT 2", "COMMIT"))
    assert seen == [("BEGIN IMMEDIATE", False), ("SELECT 1", True), ("COMMIT", True),
                    ("BEGIN", False), ("SELECT 2", False), ("COMMIT", False)]


def test_the_watch_reads_a_statement_past_its_leading_comments(tmp_path):
    conn = sqlite3.connect(tmp_path / "db", isolation_level=None)
    seen = watched(conn, WriteLockWatch(),
                   ("-- lock\nBEGIN IMMEDIATE", "/* read */ SELECT 1", "-- done\nCOMMIT"))
    assert [holds for _, holds in seen] == [False, True, True]


def test_the_watch_forgets_a_write_once_the_transaction_is_over(tmp_path):
    conn = sqlite3.connect(tmp_path / "db", isolation_level=None)
    conn.execute("CREATE TABLE t (x)")
    watch = WriteLockWatch()
    seen = watched(conn, watch, ("INSERT INTO t VALUES (1)", "SELECT 1", "BEGIN", "SELECT 2",
                                 "INSERT INTO t VALUES (2)", "SELECT 3", "ROLLBACK", "SELECT 4"))
    # autocommit write: no lock held at the next statement; in a deferred transaction the
    # lock is held from the statement after the first write on
    assert [holds for _, holds in seen] == [False, False, False, False, False, True, True, False]


def test_a_comment_inside_a_statement_is_whitespace_as_sqlite_reads_it():
    # SQLite's tokenizer skips a comment wherever it stands: this BEGIN takes the write lock
    for sql in ("BEGIN -- note\n IMMEDIATE", "BEGIN /* note */ IMMEDIATE", "BEGIN/**/EXCLUSIVE"):
        assert takes_write_lock(sql) and waits_for_write_lock(sql, holds_write=False)
        assert not changes_database(sql)
    assert not takes_write_lock("BEGIN /* IMMEDIATE */ DEFERRED")
    assert not takes_write_lock("BEGIN -- IMMEDIATE\n")
    # a string literal is one token: its words are no keywords
    assert words("SELECT 'BEGIN IMMEDIATE' -- x\n, \"a b\"") == \
        ["SELECT", "'BEGIN IMMEDIATE'", ",", '"a b"']
    assert words("select 'it''s' /* unclosed") == ["select", "'it''s'"]
    assert verb("/* a */ -- b\n  commit") == "COMMIT"


def test_a_statement_on_one_line_means_what_it_means_as_written():
    # joined onto one line, a `-- comment` would swallow the words after it
    line = sql_line("BEGIN -- note\n IMMEDIATE")
    assert line == "BEGIN /* note */ IMMEDIATE" and takes_write_lock(line)
    assert sql_line("SELECT 1 -- done */ or not\n, 2") == "SELECT 1 /* done * / or not */, 2"
    assert sql_line("SELECT '--' AS x") == "SELECT '--' AS x"
    assert sql_line("UPDATE  jobs\n   SET x = 1") == "UPDATE jobs SET x = 1"
