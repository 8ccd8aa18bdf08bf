"""Claimers in target processes of their own (grader/harness/judge/children.py): a scheduled race and a
kill at a statement on the reference, and every other way a claimer can end, each as a plain
outcome; nothing is unpickled, and nothing outlives `close`."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from lab import store

from grader.harness.judge import children
from grader.harness.judge.explore import Schedule

from conftest import CHANNEL_FDS, MUTANTS, by_check, grade

ROOT = Path(__file__).resolve().parent.parent


def pending_job(tmp_path):
    path = tmp_path / "queue.db"
    conn = store.connect(path)
    store.init_db(conn)
    job = store.enqueue(conn, 5, 1_000_000)
    conn.close()
    return path, job


def write_target(tmp_path: Path, body: str) -> str:
    path = tmp_path / "target.py"
    path.write_text("from solutions.queue import claim, finish, work_once\n"
                    + textwrap.dedent(body), encoding="utf-8")
    return str(path)


def gone(pid: int | None) -> bool:
    if pid is None:
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def ended(claimers) -> bool:
    """No claimer's thread runs and no claimer's process is left (not even a zombie)."""
    return all(not c.thread.is_alive() and gone(c.pid) for c in claimers)


def race(spec: str, path, actors=("A", "B"), policy=None, timeout=15):
    claimers = [children.spawn(spec, path, a, 0, 1000) for a in actors]
    policy = policy or Schedule()
    try:
        children.race(claimers, policy, timeout=timeout)
    finally:
        children.close(claimers)
    assert ended(claimers)
    return claimers, policy


def test_two_reference_claimers_one_statement_at_a_time_one_claim_one_none(tmp_path):
    path, job = pending_job(tmp_path)
    claimers, policy = race("solutions.queue", path)
    kinds = sorted(c.outcome["kind"] for c in claimers)
    assert kinds == ["claim", "none"]
    # The first schedule: A's whole claim (B's BEGIN IMMEDIATE is never let go while A holds
    # the write lock), then B's, which finds the job taken; no safety net ran out.
    assert policy.schedule == "AAAAABBBB"
    assert policy.stalls == [] and policy.gave_up is None
    winner = next(c for c in claimers if c.outcome["kind"] == "claim")
    assert winner.actor == "A"
    assert winner.outcome["claim"]["owner"] == winner.actor
    assert [step for step, _, _ in winner.outcome["statements"]] == [1, 2, 3, 4, 5]
    assert winner.outcome["statements"][0] == [1, "BEGIN IMMEDIATE", frozenset()]
    assert winner.outcome["statements"][1][2] == frozenset({"jobs"})  # as the authorizer told
    # every statement of both, in the log once, each claimer's in its own order
    for c in claimers:
        mine = [[step, sql] for actor, step, sql in policy.log if actor == c.actor]
        assert mine == [[step, sql] for step, sql, _ in c.outcome["statements"]]


SLOW_B = """
import time
_claim = claim

def claim(conn, owner, now, lease_ms):
    if owner == "B":
        time.sleep(1.0)  # code of its own before its first statement, past the pause limit
    return _claim(conn, owner, now, lease_ms)
"""


def test_once_the_schedule_gives_up_the_rest_runs_free_and_is_logged_at_the_end(tmp_path):
    """B runs code of its own (not a statement) past the pause limit before its first
    statement: the schedule gives up for good (B named, at no statement yet), A waiting at its
    first statement is let go free, and what both then ran is logged when they end."""
    path, _ = pending_job(tmp_path)
    claimers, policy = race(write_target(tmp_path, SLOW_B), path,
                            policy=Schedule(stall=0.1, pause=0.1))
    assert (policy.gave_up.actor, policy.gave_up.step, policy.why) == ("B", 0, "paused")
    assert sorted(c.outcome["kind"] for c in claimers) == ["claim", "none"]
    for c in claimers:
        mine = [[step, sql] for actor, step, sql in policy.log if actor == c.actor]
        assert mine == [[step, sql] for step, sql, _ in c.outcome["statements"]]


def test_a_claimer_is_killed_just_before_the_statement_asked_for(tmp_path):
    path, job = pending_job(tmp_path)
    c = children.spawn("solutions.queue", path, "A", 0, 1000, kill_at=5)
    try:
        children.run_to_kill([c], timeout=15)
    finally:
        children.close([c])
    assert ended([c])
    assert c.outcome == {"kind": "killed", "step": 5, "sql": "COMMIT"}
    assert (tmp_path / "queue.db-journal").exists()  # the transaction never committed
    conn = store.connect(path)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert store.get_job(conn, job)["status"] == "pending"
    conn.close()


def test_a_claimer_past_its_last_statement_is_not_killed(tmp_path):
    path, job = pending_job(tmp_path)
    c = children.spawn("solutions.queue", path, "A", 0, 1000, kill_at=6)
    try:
        children.run_to_kill([c], timeout=15)
    finally:
        children.close([c])
    assert c.outcome["kind"] == "claim" and len(c.outcome["statements"]) == 5
    assert ended([c])


def test_a_target_that_does_not_load_is_reported_not_hung(tmp_path):
    path, _ = pending_job(tmp_path)
    claimers, _ = race(str(tmp_path / "missing.py"), path, actors=("A",))
    outcome = claimers[0].outcome
    assert outcome["kind"] == "load-error" and outcome["error_kind"] == "no-such-file"


ENDINGS = """
import os, signal, threading
from lab.store import Claim

def claim(conn, owner, now, lease_ms):
    conn.execute("BEGIN IMMEDIATE")
    conn.execute("ROLLBACK")
    if owner == "raises":
        raise ValueError("no luck")
    if owner == "locked":
        raise __import__("sqlite3").OperationalError("database is locked")
    if owner == "todo":
        raise NotImplementedError
    if owner == "int":
        return 7
    if owner == "float-qty":
        return Claim(1, 5.0, owner, 1, 1, 1000)
    if owner == "exits":
        os._exit(7)
    if owner == "signal":
        os.kill(os.getpid(), signal.SIGTERM)
    if owner == "hangs":
        threading.Event().wait()
    return None
"""


@pytest.mark.parametrize("actor, expected", [
    ("raises", {"kind": "raised", "error": "ValueError: no luck", "locked": False}),
    ("locked", {"kind": "raised", "error": "OperationalError: database is locked",
                "locked": True}),
    ("todo", {"kind": "not-implemented"}),
    ("int", {"kind": "wrong-type", "came_back": "7", "type": "int"}),
    ("float-qty", {"kind": "wrong-field-type", "field": "qty", "value": "5.0", "type": "float",
                   "wanted": "int",
                   "came_back": "Claim(id=1, qty=5.0, owner='float-qty', token=1, attempt=1, "
                                "lease_until=1000)"}),
    ("exits", {"kind": "exited", "code": 7, "signal": None}),
    ("signal", {"kind": "exited", "code": -15, "signal": "SIGTERM"}),
])
def test_every_ending_of_a_claim_is_a_plain_outcome(tmp_path, actor, expected):
    path, _ = pending_job(tmp_path)
    claimers, _ = race(write_target(tmp_path, ENDINGS), path, actors=(actor,))
    outcome = claimers[0].outcome
    assert {k: outcome[k] for k in expected} == expected, outcome
    if outcome["kind"] in ("raised", "not-implemented", "wrong-type", "wrong-field-type"):
        assert outcome["statements"] == [[1, "BEGIN IMMEDIATE", frozenset()],
                                         [2, "ROLLBACK", frozenset()]]
    if outcome["kind"] == "raised":
        assert outcome["where"].endswith("target.py:10" if actor == "raises" else "target.py:12")


def test_a_claim_that_hangs_is_no_answer_and_its_process_is_killed(tmp_path):
    path, _ = pending_job(tmp_path)
    started = time.monotonic()
    # past the pause limit the schedule gives up (hangs runs code of its own): B goes free
    claimers, _ = race(write_target(tmp_path, ENDINGS), path, actors=("hangs", "B"), timeout=2,
                       policy=Schedule(pause=0.5))
    outcomes = {c.actor: c.outcome for c in claimers}
    assert outcomes["hangs"] == {"kind": "no-answer"}
    assert outcomes["B"]["kind"] == "none"  # not held up by the one that hangs
    assert time.monotonic() - started < 12


GARBAGE = """
import os

""" + CHANNEL_FDS + """

_claim = claim

def claim(conn, owner, now, lease_ms):
    if owner == "A":
        for fd in channel_fds():
            os.write(fd, PAYLOAD)
    return _claim(conn, owner, now, lease_ms)
"""

FORGED_REPLY = (b'{"msg":"reply","id":2,"value":{"kind":"claim","value":{"id":1,"qty":5,'
                b'"owner":"A","token":1,"attempt":1,"lease_until":1000}},"statements":[],'
                b'"dropped":0}\n')
FORGED_STATEMENT = (b'{"msg":"callback","id":2,"cb":1,"name":"statement",'
                    b'"arg":{"step":1,"sql":"COMMIT","holds_write":true}}\n')


@pytest.mark.skipif(not os.path.isdir("/proc/self/fdinfo"), reason="needs /proc")
@pytest.mark.parametrize("payload", [b"garbage \xff\n", FORGED_REPLY, FORGED_STATEMENT],
                         ids=["garbage", "forged-reply", "forged-statement"])
def test_a_claimer_that_writes_on_its_channel_is_a_protocol_error(tmp_path, payload):
    path, _ = pending_job(tmp_path)
    spec = write_target(tmp_path, f"PAYLOAD = {payload!r}\n" + GARBAGE)
    claimers, _ = race(spec, path)
    outcomes = {c.actor: c.outcome for c in claimers}
    assert outcomes["A"]["kind"] == "protocol-error", outcomes["A"]
    assert outcomes["A"]["error"]
    assert outcomes["B"]["kind"] in ("claim", "none")


def test_run_to_kill_reports_a_protocol_error_too(tmp_path):
    path, _ = pending_job(tmp_path)
    spec = write_target(tmp_path, f"PAYLOAD = {b'garbage'!r}\n" + GARBAGE)
    c = children.spawn(spec, path, "A", 0, 1000, kill_at=3)
    try:
        children.run_to_kill([c], timeout=15)
    finally:
        children.close([c])
    # no newline: the garbage runs into the target's next message, which is then no JSON
    assert c.outcome["kind"] == "protocol-error", c.outcome
    assert ended([c])


LIARS = """
import os
from lab.store import Claim

MARKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ran-in-the-judge")


class Evil:
    def __reduce__(self):  # what an unpickling judge would run
        return (os.system, (f"touch {MARKER}",))

    def __eq__(self, other):
        return True

    def __hash__(self):
        return 1


class LyingInt(int):
    def __eq__(self, other):
        return True

    def __hash__(self):
        return 1


def claim(conn, owner, now, lease_ms):
    if owner == "A":
        return Claim(id=Evil(), qty=5, owner="A", token=1, attempt=1, lease_until=1000)
    return Claim(id=1, qty=5, owner="B", token=LyingInt(1), attempt=1, lease_until=1000)
"""


def test_lying_values_come_back_as_data_and_run_nothing_in_the_judge(tmp_path):
    """What lifted a do-nothing queue when outcomes crossed a pickling pipe: a Claim field whose
    __reduce__ runs code where it is unpickled, an int that equals anything."""
    path, _ = pending_job(tmp_path)
    claimers, _ = race(write_target(tmp_path, LIARS), path)
    outcomes = {c.actor: c.outcome for c in claimers}
    assert outcomes["A"]["kind"] == "wrong-field-type" and outcomes["A"]["field"] == "id"
    assert outcomes["A"]["type"] == "graded_target.Evil"
    assert outcomes["B"]["kind"] == "wrong-field-type" and outcomes["B"]["field"] == "token"
    assert outcomes["B"]["type"] == "graded_target.LyingInt" and outcomes["B"]["wanted"] == "int"
    assert not (tmp_path / "ran-in-the-judge").exists()


def test_close_before_any_start_leaves_nothing_behind(tmp_path):
    path, _ = pending_job(tmp_path)
    claimers = [children.spawn("solutions.queue", path, a, 0, 1000) for a in ("A", "B")]
    events = children._start(claimers)
    children.close(claimers)  # at once: the threads may still be starting their processes
    assert ended(claimers)
    assert events.qsize() <= 2 * len(claimers)


def test_no_multiprocessing_and_no_pickle_on_the_judge_side(tmp_path):
    source = (ROOT / "grader" / "harness" / "judge" / "children.py").read_text(encoding="utf-8")
    assert "multiprocessing" not in source.split('"""', 2)[2]
    assert "pickle" not in source.split('"""', 2)[2]
    path, _ = pending_job(tmp_path)
    script = textwrap.dedent(f"""
        import json, sys
        from grader.harness.judge import children
        from grader.harness.judge.explore import Schedule
        claimers = [children.spawn("solutions.queue", {str(path)!r}, a, 0, 1000) for a in "AB"]
        try:
            children.race(claimers, Schedule(), timeout=15)
        finally:
            children.close(claimers)
        print(json.dumps({{"kinds": sorted(c.outcome["kind"] for c in claimers),
                          "modules": sorted(m for m in sys.modules if m == "lab.queue" or
                                            m.split(".")[0] in ("multiprocessing", "pickle",
                                                                "_pickle", "solutions"))}}))
    """)
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == {"kinds": ["claim", "none"], "modules": []}


@pytest.mark.parametrize("lang, said", [
    ("en", r"schedule (A{6}B{5}|B{6}A{5}) \(one letter per statement"),
    ("ja", r"スケジュール (A{6}B{5}|B{6}A{5}) です"),
])
def test_the_race_report_names_the_schedule_it_ran(tmp_path, lang, said):
    """The statements of race_busy_timeout_zero are PRAGMA, BEGIN IMMEDIATE, ...: the claimer
    whose BEGIN IMMEDIATE went first runs its whole claim before the other's BEGIN IMMEDIATE
    may go (it would wait for the write lock), and the report names that schedule, to replay."""
    proc, results = grade(str(MUTANTS / "race_busy_timeout_zero.py"), tmp_path,
                          "-k", "race-one-winner", "--lang", lang)
    output = by_check(results)["race-one-winner"]["output"]
    assert re.search(said, output), output
