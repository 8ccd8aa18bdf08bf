"""The lockstep policy and the write-lock watch, without processes: a fake clock. (The gate itself,
in the target process, is tested in test_statement_gate.py.)"""

from __future__ import annotations

import sqlite3

import pytest

from grader.checks.test_race import judge, lock_taken_at, narrate
from grader.checks.situations import leased
from grader.harness.scenario import CheckFailed, Lab
from grader.report.messages import text

from grader.harness.interleave import (GaveUp, Lockstep, WriteLockWatch, bare, changes_database,
                                       is_statement, takes_write_lock, verb,
                                       waits_for_write_lock)


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def lockstep(*actors, short=0.3, long=5.0):
    clock = Clock()
    policy = Lockstep(short=short, long=long, clock=clock)
    for actor in actors:
        policy.join(actor)
    return policy, clock


def test_a_process_waits_until_the_other_reaches_the_same_statement():
    policy, _ = lockstep("A", "B")
    policy.arrived("A", 1, "SELECT 1", holds_write=False)
    assert policy.releasable() == []
    policy.arrived("B", 1, "SELECT 1", holds_write=False)
    assert sorted(policy.releasable()) == [("A", "go"), ("B", "go")]


def test_the_one_ahead_waits_the_one_behind_goes():
    policy, _ = lockstep("A", "B")
    policy.arrived("A", 2, "UPDATE", holds_write=False)
    policy.arrived("B", 1, "SELECT", holds_write=False)
    assert policy.releasable() == [("B", "go")]


def test_a_finished_process_is_not_waited_for():
    policy, _ = lockstep("A", "B")
    policy.finished("B")
    policy.arrived("A", 3, "COMMIT", holds_write=True)
    assert policy.releasable() == [("A", "go")]


def test_statements_are_logged_in_the_order_they_were_let_go():
    policy, _ = lockstep("A", "B")
    policy.arrived("A", 2, "UPDATE jobs SET token = 1", holds_write=False)  # reported first
    policy.arrived("B", 1, "SELECT id FROM jobs", holds_write=False)
    assert policy.log == []
    assert policy.releasable() == [("B", "go")]
    policy.arrived("B", 2, "UPDATE jobs SET token = 1", holds_write=False)
    policy.releasable()
    assert [(a, step) for a, step, _ in policy.log] == [("B", 1), ("A", 2), ("B", 2)]


def both_let_go_at(policy, step, sql):
    """A and B both reach statement `step` (holding no write lock) and are let go."""
    for actor in ("A", "B"):
        policy.arrived(actor, step, sql, holds_write=False)
    assert sorted(policy.releasable()) == [("A", "go"), ("B", "go")]


def test_the_write_lock_holder_runs_on_while_the_other_waits_for_that_lock_inside_sqlite():
    policy, clock = lockstep("A", "B")
    both_let_go_at(policy, 1, "BEGIN IMMEDIATE")
    # A got the lock and reports its next statement; B is stuck in its BEGIN IMMEDIATE.
    policy.arrived("A", 2, "SELECT id FROM jobs", holds_write=True)
    assert policy.releasable() == [("A", "go")]
    assert policy.passes == [("A", 2, ["B"])] and policy.gave_up is None and clock.now == 0
    policy.arrived("A", 3, "COMMIT", holds_write=True)
    assert policy.releasable() == [("A", "go")]
    # Outside its transaction A holds no lock: the barrier holds again until B catches up.
    policy.arrived("A", 4, "UPDATE jobs SET status = 'leased'", holds_write=False)
    assert policy.releasable() == []
    for step, sql in ((2, "SELECT id FROM jobs"), (3, "COMMIT")):
        policy.arrived("B", step, sql, holds_write=True)
        assert policy.releasable() == [("B", "go")]
    policy.arrived("B", 4, "UPDATE jobs SET status = 'leased'", holds_write=False)
    assert sorted(policy.releasable()) == [("A", "go"), ("B", "go")]
    assert policy.gave_up is None


def test_a_reader_is_not_taken_for_blocked_by_the_write_lock():
    policy, _ = lockstep("A", "B")
    policy.arrived("B", 1, "SELECT id FROM jobs", holds_write=False)
    policy.arrived("A", 1, "BEGIN IMMEDIATE", holds_write=False)
    policy.releasable()
    policy.arrived("A", 2, "UPDATE jobs SET token = token + 1", holds_write=True)
    assert policy.releasable() == [] and policy.passes == []


def test_a_rollback_is_no_proof_of_holding_the_write_lock():
    policy, _ = lockstep("A", "B")
    both_let_go_at(policy, 3, "UPDATE jobs SET token = token + 1")
    # A's update failed with SQLITE_BUSY (the gate cannot see that); A rolls back.
    policy.arrived("A", 4, "ROLLBACK", holds_write=True)
    assert policy.releasable() == [] and policy.passes == []


def test_a_process_without_the_write_lock_never_runs_on_past_a_blocked_one():
    policy, _ = lockstep("A", "B")
    both_let_go_at(policy, 1, "BEGIN IMMEDIATE")
    policy.arrived("A", 2, "SELECT 1", holds_write=False)
    assert policy.releasable() == []


def test_which_statements_wait_for_another_connections_write_lock():
    assert waits_for_write_lock("BEGIN IMMEDIATE", holds_write=False)
    assert waits_for_write_lock("UPDATE jobs SET x = 1", holds_write=False)
    assert not waits_for_write_lock("UPDATE jobs SET x = 1", holds_write=True)
    assert not waits_for_write_lock("BEGIN", holds_write=False)
    assert not waits_for_write_lock("SELECT 1", holds_write=False)
    assert not waits_for_write_lock("COMMIT", holds_write=False)
    assert not waits_for_write_lock("ROLLBACK", holds_write=False)


def test_a_write_lock_holder_gives_up_after_the_short_wait_for_good():
    policy, clock = lockstep("A", "B", short=0.3, long=5.0)
    policy.arrived("A", 2, "UPDATE", holds_write=True)
    assert policy.next_timeout() == 0.3
    clock.now = 0.29
    policy.expire()
    assert policy.gave_up is None
    clock.now = 0.3
    policy.expire()
    assert (policy.gave_up.actor, policy.gave_up.step, policy.gave_up.waited) == ("A", 2, 0.3)
    assert policy.releasable() == [("A", "free")]
    policy.arrived("B", 2, "UPDATE", holds_write=True)
    assert policy.releasable() == [("B", "free")]


def test_without_the_write_lock_the_wait_is_long():
    policy, clock = lockstep("A", "B", short=0.3, long=5.0)
    policy.arrived("A", 1, "BEGIN IMMEDIATE", holds_write=False)
    clock.now = 4.9
    policy.expire()
    assert policy.gave_up is None and policy.next_timeout() == pytest.approx(0.1)


def test_a_child_that_only_tells_is_logged_not_waited_for():
    policy, _ = lockstep("A", "B")
    policy.arrived("A", 4, "COMMIT", holds_write=True, asking=False)
    assert policy.waiting == {} and policy.log == [("A", 4, "COMMIT")]


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


# -- how the race check tells the lockstep (grader/checks/test_race.py) -------------------------
class _Notes:
    """What `narrate` needs of a Lab: notes on a timeline."""

    def __init__(self):
        self.timeline = []

    def note(self, key, **params):
        self.timeline.append({"op": "note", "key": key, "params": params})


def _told(policy) -> list[str]:
    lab = _Notes()
    narrate(lab, {}, policy)
    return [text(e["key"], "en", **e["params"]) for e in lab.timeline]


def test_the_race_names_the_statement_that_took_the_write_lock():
    """issue 15: "A holds the write lock from statement 3 on" came right after A's BEGIN
    IMMEDIATE, its statement 2: the lock is A's since statement 2; it runs on from 3."""
    policy, _ = lockstep("A", "B")
    both_let_go_at(policy, 1, "PRAGMA busy_timeout = 0")
    both_let_go_at(policy, 2, "BEGIN IMMEDIATE")
    policy.arrived("A", 3, "UPDATE jobs SET status = 'quarantined'", holds_write=True)
    assert policy.releasable() == [("A", "go")]
    told = _told(policy)
    runs_on = next(i for i, line in enumerate(told) if "holds the write lock" in line)
    assert told[runs_on - 1].endswith("statement 2: BEGIN IMMEDIATE")
    assert told[runs_on + 1].startswith("A, statement 3: UPDATE")
    assert "since its statement 2 (BEGIN IMMEDIATE)" in told[runs_on]
    assert "runs on from statement 3 " in told[runs_on]
    assert "statement 3 on" not in told[runs_on]


def test_after_a_deferred_begin_the_lock_is_taken_by_the_first_write():
    log = [("A", 1, "BEGIN"), ("A", 2, "SELECT id FROM jobs"), ("B", 1, "BEGIN"),
           ("A", 3, "UPDATE jobs SET token = 1"), ("A", 4, "SELECT 1")]
    assert lock_taken_at(log, "A", 4) == (3, "UPDATE jobs SET token = 1")
    # an earlier transaction's write is not the one held now
    log = [("A", 1, "BEGIN IMMEDIATE"), ("A", 2, "COMMIT"), ("A", 3, "BEGIN"),
           ("A", 4, "SELECT 1")]
    assert lock_taken_at(log, "A", 5) is None


def test_a_race_whose_lockstep_gave_up_is_never_a_pass(tmp_path):
    """The race's verdict on the same outcomes (A got the job, B None, the row as it must be):
    a pass when the lockstep held to the end, a failure of its own when it gave up (the claims
    ran freely from there: nothing was forced)."""
    lab = Lab(None, str(tmp_path))
    try:
        job = lab.enqueue(qty=5)
        before = lab.row(job)
        lab.set_row(job, status="leased", owner="A", token=1, attempts=1, lease_until=1000)
        assert lab.row(job) == leased(before, "A", token=1, attempts=1, lease_until=1000)
        stamp = {"id": job, "qty": 5, "owner": "A", "token": 1, "attempt": 1,
                 "lease_until": 1000}
        outcomes = {"A": {"kind": "claim", "claim": stamp, "statements": []},
                    "B": {"kind": "none", "statements": []}}
        judge(lab, job, before, outcomes)  # passes
        with pytest.raises(CheckFailed) as failed:
            judge(lab, job, before, outcomes, GaveUp("B", 2, 5.0, False))
        failure = failed.value.failure
        assert failure.detail == "race-lockstep-incomplete"
        assert (failure.params["actor"], failure.params["other"], failure.params["step"],
                failure.params["waited"]) == ("B", "A", 2, "5")
        sentence = text("detail.race-lockstep-incomplete", "en", **failure.params)
        assert "B waited 5 s at its statement 2 for A" in sentence and "never a pass" in sentence
    finally:
        lab.close()
