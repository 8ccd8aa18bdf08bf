"""The connection handed to the code under grade (grader/harness/judge/watched.py): opened as
lab.store.connect opens it, and a trace callback of the target's own never replaces the grader's."""

from __future__ import annotations

import textwrap
import threading

from grader.harness.judge import watched
from grader.harness.judge.scenario import Lab
from lab import store
from lab.store import Claim


def settings(conn) -> tuple:
    return (conn.isolation_level, conn.execute("PRAGMA busy_timeout").fetchone()[0],
            conn.execute("PRAGMA journal_mode").fetchone()[0])


def test_opened_with_the_settings_of_the_store(tmp_path):
    for busy in (store.BUSY_TIMEOUT_MS, 150):
        ours = watched.connect(tmp_path / "a.db", busy)
        theirs = store.connect(tmp_path / "b.db", busy)
        assert settings(ours) == settings(theirs) == (None, busy, "delete")
        assert isinstance(ours, watched.WatchedConnection)
        used = []  # check_same_thread=False: another thread may use it
        thread = threading.Thread(target=lambda: used.append(ours.execute("SELECT 1").fetchone()))
        thread.start()
        thread.join()
        assert used == [(1,)]


def test_the_targets_callback_runs_after_the_graders_and_never_replaces_it(tmp_path):
    conn = watched.connect(tmp_path / "q.db")
    seen = []
    conn.watch(lambda sql: seen.append(("grader", sql)))
    conn.execute("SELECT 1")
    conn.set_trace_callback(lambda sql: seen.append(("target", sql)))
    conn.execute("-- mine\nSELECT 2")
    conn.set_trace_callback(None)  # removes the target's only
    conn.execute("SELECT 3")
    assert seen == [("grader", "SELECT 1"), ("grader", "-- mine\nSELECT 2"),
                    ("target", "-- mine\nSELECT 2"), ("grader", "SELECT 3")]


def test_the_targets_callback_works_without_the_graders(tmp_path):
    conn = watched.connect(tmp_path / "q.db")
    seen = []
    conn.set_trace_callback(seen.append)
    conn.watch(lambda sql: None)
    conn.watch(None)
    conn.execute("SELECT 1")
    conn.set_trace_callback(None)
    conn.execute("SELECT 2")
    assert seen == ["SELECT 1"]


def test_the_lab_sees_every_statement_of_a_target_with_its_own_callback(tmp_path):
    code = tmp_path / "own_trace.py"
    code.write_text(textwrap.dedent("""
        logged = []

        def claim(conn, owner, now, lease_ms):
            conn.set_trace_callback(logged.append)
            conn.execute("BEGIN IMMEDIATE")
            conn.execute("SELECT id FROM jobs")
            conn.execute("COMMIT")
            return None

        def finish(conn, claim, now):
            return len(logged)  # what its own callback saw, counted

        def work_once(conn, owner, send, clock, lease_ms):
            return None
    """))
    lab = Lab(str(code), str(tmp_path))
    try:
        lab.claim("A", now=0, lease_ms=1000)
        assert lab.statements_of(1) == ["BEGIN IMMEDIATE", "SELECT id FROM jobs", "COMMIT"]
        assert lab.target.finish("main", Claim(1, 1, "A", 1, 1, 1), 0) == 3
    finally:
        lab.close()
