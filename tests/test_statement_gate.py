"""Gated connections in the target process (target_server / target_client): during a claim on a
connection opened with gated=True, the target asks the judge before each statement, with data
only, and the judge's answers decide when it runs. What the race and crash checks stand on."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest

from lab import store
from lab.store import Claim
from grader.harness.judge.target_client import TargetProcess
from grader.harness.judge.target_errors import ProtocolError, TargetClosed

from conftest import CHANNEL_FDS, gone

LEASE_MS = 1000
REFERENCE = ["BEGIN IMMEDIATE", "UPDATE jobs SET status = 'quarantined'", "SELECT id FROM jobs",
             "UPDATE jobs SET status = 'leased'", "COMMIT"]


def fresh_db(tmp_path: Path, jobs: int = 2) -> Path:
    path = tmp_path / "queue.db"
    conn = store.connect(path)
    store.init_db(conn)
    for _ in range(jobs):
        store.enqueue(conn, 5, 1_000_000)
    conn.close()
    return path


def write_target(tmp_path: Path, body: str) -> str:
    path = tmp_path / "target.py"
    path.write_text("from solutions.queue import claim, finish, work_once\n"
                    + textwrap.dedent(body), encoding="utf-8")
    return str(path)


class Asked:
    """A judge-side statement callable: records what it is asked, answers from a script."""

    def __init__(self, answers=()):
        self.asked: list[tuple[int, str, bool]] = []
        self.answers = list(answers)

    def __call__(self, step, sql, holds_write):
        self.asked.append((step, sql, holds_write))
        return self.answers.pop(0) if self.answers else "go"


def test_a_gated_claim_asks_before_each_statement_with_its_step_and_write_lock(tmp_path):
    path = fresh_db(tmp_path)
    with TargetProcess("solutions.queue") as target:
        target.open("A", path, gated=True)
        asked = Asked()
        claim = target.claim("A", "A", 0, LEASE_MS, statement=asked)
        assert claim == Claim(id=1, qty=5, owner="A", token=1, attempt=1, lease_until=1000)
        assert [step for step, _, _ in asked.asked] == [1, 2, 3, 4, 5]
        assert [sql.startswith(start) for (_, sql, _), start in zip(asked.asked, REFERENCE)] \
            == [True] * 5
        # BEGIN IMMEDIATE takes the write lock: every statement after it in the transaction holds it
        assert [holds for _, _, holds in asked.asked] == [False, True, True, True, True]
        assert [sql for _, sql, _ in asked.asked] == [sql for _, sql, _ in target.statements]
        # steps start again at 1 in the next claim; the next call on it is not gated
        asked = Asked()
        assert target.claim("A", "B", 0, LEASE_MS, statement=asked).id == 2
        assert [step for step, _, _ in asked.asked] == [1, 2, 3, 4, 5]
        assert target.finish("A", claim, 10) is True
        target.sync()


def test_the_gate_tells_which_cursors_still_run_a_statement(tmp_path):
    """Before each statement the judge can see the code's cursors whose statement still runs
    (rows left unread: its lock is held): a SELECT read one row of three keeps its read lock,
    past another statement on another cursor, until its rows are all read; an UPDATE ... RETURNING
    read one row of three keeps the write lock. A statement about to run is not counted."""
    path = fresh_db(tmp_path, jobs=3)
    spec = write_target(tmp_path, """
        def claim(conn, owner, now, lease_ms):
            kept = conn.execute("SELECT id FROM jobs")
            kept.fetchone()
            conn.execute("SELECT 1").fetchall()
            kept.fetchall()
            again = conn.execute("UPDATE jobs SET qty = qty RETURNING id")
            again.fetchone()
            conn.execute("SELECT 2").fetchall()
            again.fetchall()
            conn.execute("SELECT 3 FROM jobs WHERE id = 1").fetchone()
            conn.execute("SELECT 4")
            return None
    """)
    with TargetProcess(spec) as target:
        target.open("A", path, gated=True)
        seen = []

        def statement(step, sql, holds_write):
            seen.append((sql, target.unfinished("A")))
            return "go"
        assert target.claim("A", "A", 0, LEASE_MS, statement=statement) is None
        assert target.unfinished("A") == (0, 0)  # the one-row SELECTs were read to their end
        target.sync()
    assert seen == [("SELECT id FROM jobs", (0, 0)), ("SELECT 1", (1, 0)),
                    ("UPDATE jobs SET qty = qty RETURNING id", (0, 0)),
                    ("SELECT 2", (0, 1)), ("SELECT 3 FROM jobs WHERE id = 1", (0, 0)),
                    ("SELECT 4", (0, 0))]


def test_the_gate_tells_which_tables_a_statement_touches_as_sqlite_says(tmp_path):
    """Before each statement the judge can see which tables it reads or writes, as SQLite's
    authorizer named them when the judge's connection prepared it: none for SELECT 1,
    sqlite_version(), total_changes() or a PRAGMA, however the text mentions jobs; jobs for a
    statement on it, also when it runs again from sqlite3's statement cache."""
    path = fresh_db(tmp_path, jobs=1)
    spec = write_target(tmp_path, """
        def claim(conn, owner, now, lease_ms):
            for sql in ("SELECT 1", "SELECT sqlite_version() -- on jobs", "SELECT 1",
                        "PRAGMA table_info(jobs)", "SELECT count(*) FROM sqlite_master",
                        "SELECT id FROM jobs", "UPDATE jobs SET qty = qty WHERE id = 1",
                        "SELECT id FROM jobs", "SELECT total_changes()"):
                conn.execute(sql).fetchall()
            return None
    """)
    with TargetProcess(spec) as target:
        target.open("A", path, gated=True)
        seen = []

        def statement(step, sql, holds_write):
            seen.append((sql, target.tables_read("A")))
            return "go"
        assert target.claim("A", "A", 0, LEASE_MS, statement=statement) is None
        target.sync()
    none, jobs = frozenset(), frozenset({"jobs"})
    assert seen == [("SELECT 1", none), ("SELECT sqlite_version() -- on jobs", none),
                    ("SELECT 1", none), ("PRAGMA table_info(jobs)", none),
                    ("SELECT count(*) FROM sqlite_master", frozenset({"sqlite_master"})),
                    ("SELECT id FROM jobs", jobs),
                    ("UPDATE jobs SET qty = qty WHERE id = 1", jobs),
                    ("SELECT id FROM jobs", jobs), ("SELECT total_changes()", none)]


def test_free_lets_the_claim_run_on_without_asking(tmp_path):
    path = fresh_db(tmp_path)
    with TargetProcess("solutions.queue") as target:
        target.open("A", path, gated=True)
        asked = Asked(["go", "free"])
        assert target.claim("A", "A", 0, LEASE_MS, statement=asked).id == 1
        assert [step for step, _, _ in asked.asked] == [1, 2]
        assert len(target.statements) == 5  # the rest ran, and came back with the reply
        target.sync()


def test_the_judge_decides_when_each_statement_runs(tmp_path):
    """While the judge holds statement 4 (the lease), a judge connection still sees the job
    pending, locked; once let go, the claim commits it."""
    path = fresh_db(tmp_path)
    judge = store.connect(path, busy_timeout_ms=50)
    seen = []

    def statement(step, sql, holds_write):
        seen.append((step, store.get_job(judge, 1)["status"]))
        return "go"
    with TargetProcess("solutions.queue") as target:
        target.open("A", path, gated=True)
        target.claim("A", "A", 0, LEASE_MS, statement=statement)
    assert seen == [(n, "pending") for n in range(1, 6)]  # until COMMIT, nothing is visible
    assert store.get_job(judge, 1)["status"] == "leased"
    judge.close()


def test_only_a_claim_on_a_gated_connection_asks_and_it_must_be_given_statement(tmp_path):
    path = fresh_db(tmp_path)
    with TargetProcess("solutions.queue") as target:
        target.open("A", path, gated=True)
        target.open("B", path)
        with pytest.raises(TypeError):
            target.claim("A", "A", 0, LEASE_MS)  # gated: statement= is required
        with pytest.raises(TypeError):
            target.claim("B", "B", 0, LEASE_MS, statement=Asked())  # not gated
        assert target.claim("B", "B", 0, LEASE_MS).id == 1
        target.execute("A", "SELECT 1")
        assert target.work_once("A", "W", lambda claim: None, lambda: 0, LEASE_MS) is True
        target.open("A", path)  # reopened without gated: asks no more
        assert target.claim("A", "A", 0, LEASE_MS) is None  # both jobs are taken by now
        target.sync()


THREADED = """
import threading

def claim(conn, owner, now, lease_ms):
    conn.execute("SELECT 1")
    worker = threading.Thread(target=lambda: conn.execute("SELECT 2"))
    worker.start()
    worker.join()
    conn.execute("SELECT 3")
    return None
"""


def test_a_statement_run_in_another_thread_is_asked_too(tmp_path):
    """The gate is on the judge's connection: every statement of a gated claim waits for it,
    whichever thread of the code's own ran it (a claimer cannot write around the gate)."""
    path = fresh_db(tmp_path)
    with TargetProcess(write_target(tmp_path, THREADED)) as target:
        target.open("A", path, gated=True)
        asked = Asked()
        assert target.claim("A", "A", 0, LEASE_MS, statement=asked) is None
        assert [(step, sql) for step, sql, _ in asked.asked] == [
            (1, "SELECT 1"), (2, "SELECT 2"), (3, "SELECT 3")]
        assert [sql for _, sql, _ in target.statements] == ["SELECT 1", "SELECT 2", "SELECT 3"]


def test_a_statement_callable_that_raises_or_answers_wrong_kills_the_target(tmp_path):
    path = fresh_db(tmp_path)
    for statement, error in ((lambda *a: 1 / 0, ZeroDivisionError),
                             (lambda *a: "maybe", TypeError)):
        target = TargetProcess("solutions.queue")
        target.open("A", path, gated=True)
        with pytest.raises(error):
            target.claim("A", "A", 0, LEASE_MS, statement=statement)
        assert gone(target.pid)
        with pytest.raises(TargetClosed):
            target.sync()


FORGER = """
import json, os

""" + CHANNEL_FDS + """

_claim = claim

def claim(conn, owner, now, lease_ms):
    data = PAYLOAD
    for fd in channel_fds():
        os.write(fd, data)
    return _claim(conn, owner, now, lease_ms)
"""


def _callback(cb, arg, name="statement", call=1, msg="callback"):
    import json
    message = {"msg": msg, "id": call, "cb": cb, "name": name, "arg": arg}
    if msg == "db":
        message = {"msg": "db", "id": call, "cb": cb, "req": arg}
    return (json.dumps(message) + "\n").encode()


@pytest.mark.skipif(not os.path.isdir("/proc/self/fdinfo"), reason="needs /proc")
@pytest.mark.parametrize("payload, why", [
    # the gate is the judge's: a statement callback is no message a target may send at all
    (_callback(1, {"step": 1, "sql": "COMMIT", "holds_write": True}),
     "unknown name|output after a message"),
    (_callback(1, {"step": 1, "sql": "COMMIT", "holds_write": True}, call=2),
     "unknown name|output after a message"),
    # a database request written on the channel by the code itself: out of turn
    (_callback(1, {"op": "commit", "conn": "A", "epoch": 1}, msg="db", call=2),
     "another call|output after a message"),
    (_callback(7, {"op": "commit", "conn": "A", "epoch": 1}, msg="db"),
     "out of sequence|output after a message"),
    (_callback(1, {"kind": "none"}, name="send"), "send callback during claim"),
    (b"garbage\n", "not JSON"),
], ids=lambda value: value if isinstance(value, str) else "payload")
def test_a_forged_gate_or_database_message_is_a_protocol_error(tmp_path, payload, why):
    path = fresh_db(tmp_path)
    target = TargetProcess(write_target(tmp_path, f"PAYLOAD = {payload!r}\n" + FORGER))
    target.open("A", path, gated=True)
    asked = Asked()
    with pytest.raises(ProtocolError, match=why):
        target.claim("A", "A", 0, LEASE_MS, statement=asked)  # call 1
        target.sync()
    assert gone(target.pid)
    assert store.get_job(store.connect(path), 1)["status"] == "pending"  # nothing committed
