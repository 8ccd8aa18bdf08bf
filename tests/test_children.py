"""Real spawned claimers on the reference solution: a lockstep race and a kill at a statement."""

from __future__ import annotations

from lab import store

from grader.harness import children
from grader.harness.interleave import Lockstep


def pending_job(tmp_path):
    path = tmp_path / "queue.db"
    conn = store.connect(path)
    store.init_db(conn)
    job = store.enqueue(conn, 5, 1_000_000)
    conn.close()
    return path, job


def test_two_reference_claimers_in_lockstep_one_claim_one_none(tmp_path):
    path, job = pending_job(tmp_path)
    claimers = [children.spawn("solutions.queue", path, a, 0, 1000) for a in ("A", "B")]
    lockstep = Lockstep()
    try:
        children.race(claimers, lockstep, timeout=15)
    finally:
        children.close(claimers)
    kinds = sorted(c.outcome["kind"] for c in claimers)
    assert kinds == ["claim", "none"]
    # Both reached BEGIN IMMEDIATE together; the winner then ran on at once, holding the write
    # lock, while the loser waited for it inside SQLite: no safety timeout ran out.
    assert [step for _, step, _ in lockstep.log[:2]] == [1, 1]
    winner = next(c.actor for c in claimers if c.outcome["kind"] == "claim")
    assert lockstep.passes and {actor for actor, _, _ in lockstep.passes} == {winner}
    assert lockstep.gave_up is None
    assert all(not c.process.is_alive() for c in claimers)


def test_a_claimer_is_killed_just_before_the_statement_asked_for(tmp_path):
    path, job = pending_job(tmp_path)
    c = children.spawn("solutions.queue", path, "A", 0, 1000, kill_at=5)
    try:
        children.run_to_kill([c], timeout=15)
    finally:
        children.close([c])
    assert c.outcome == {"kind": "killed", "step": 5, "sql": "COMMIT"}
    assert (tmp_path / "queue.db-journal").exists()  # the transaction never committed
    conn = store.connect(path)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert store.get_job(conn, job)["status"] == "pending"
    conn.close()


def test_a_target_that_does_not_load_is_reported_not_hung(tmp_path):
    path, _ = pending_job(tmp_path)
    c = children.spawn(str(tmp_path / "missing.py"), path, "A", 0, 1000)
    try:
        children.race([c], Lockstep(), timeout=15)
    finally:
        children.close([c])
    assert c.outcome["kind"] == "load-error" and c.outcome["error_kind"] == "no-such-file"
