"""A worker's process dies (SIGKILL) in the middle of claim: the job is untouched or fully
claimed, never half; the database stays intact and the job can be claimed again.

A rehearsal on a scratch database records claim's statements. Then, for each statement that
follows one that may change the database (grader.harness.judge.explore.kill_points: every statement
boundary where a crash can leave something different; more than the explorer's cap fails, never
silently skipped), a target process of its own (grader.harness.judge.children)
runs claim on a fresh database and is killed just before that statement (its gated connection
asks before each statement and is answered by a SIGKILL there: no timing involved). The last
kill point, just before claim's final statement (its COMMIT, in a correct claim), runs on the
check's own database, which is then claimed again.
"""

from __future__ import annotations

import os

from lab import store
from lab.store import Claim

from grader.checkdef import check
from grader.harness.judge import children
from .situations import leased
from grader.harness.judge.explore import MAX_KILL_POINTS, kill_points
from grader.harness.judge.interleave import sql_line
from grader.harness.judge.outcomes import CheckFailed
from grader.harness.judge.scenario import Lab, insert_job
from grader.results import Failure, Kind, Outcome, RowDiff

QTY = 5
CRASH_TIMEOUT = 15.0  # seconds for all the children, once started


@check("crash-mid-claim-atomic", points=3, timeout=45.0)
def test_crash_mid_claim(lab):
    """A is killed with SIGKILL before each of claim's statements in turn: never a half claim."""
    w = lab.world
    full = rehearse(lab)
    job = lab.enqueue(qty=QTY)
    before = lab.row(job)
    plan = kill_points(full["statements"])
    points = plan.points
    lab.note("crash.plan", count=len(points), t=w.t0)
    if plan.capped:  # reported before anything runs: a check that could not cover every point
        lab.fail("crash-too-many-points", count=len(points) + plan.capped, cap=MAX_KILL_POINTS)
    databases = {k: lab.path if k == points[-1] else fresh_database(lab, k, before)
                 for k in points}
    claimers = [children.spawn(lab.target_spec, databases[k], w.name("A"), w.t0, w.lease_ms,
                               kill_at=k)
                for k in points]
    try:
        children.run_to_kill(claimers, timeout=CRASH_TIMEOUT)
    finally:
        children.close(claimers)
    survived = []
    for c in claimers:
        found = inspect(lab, c, job, before, full["row"])
        if found["state"] == "half" or found["integrity"] != "ok" or c is claimers[-1]:
            narrate(lab, survived, found)
            judge(lab, found, job, full["row"])
        else:
            survived.append(str(c.kill_at))
    # The job is claimable again. A lease lease_ms after t0 the dead claim may have committed
    # has run out, so a correct queue hands the job to C in either case, with the next token.
    row = lab.row(job)
    now = w.t0 + w.lease_ms
    c = lab.claim(w.name("C"), now=now, lease_ms=w.lease_ms)
    until = now + w.lease_ms
    lab.expect(c, Claim(id=job, qty=before["qty"], owner=w.name("C"), token=row["token"] + 1,
                        attempt=row["attempts"] + 1, lease_until=until),
               job=job, row=leased(row, w.name("C"), token=row["token"] + 1,
                                   attempts=row["attempts"] + 1, lease_until=until),
               detail="crash-reclaim", now=now)


def rehearse(lab: Lab) -> dict:
    """Run claim once, uninterrupted, on a scratch database with the same pending job: the
    statements it runs and the row a complete claim leaves. The lab's own connection in the
    target process is opened on the scratch database for that one call (so the call is
    recorded, statements included, as any other), then on the check's database again."""
    w = lab.world
    path = lab.dir / w.file("rehearsal")
    conn = store.connect(path)
    try:
        store.init_db(conn)
        job = insert_job(conn, w.peek_id(), w.qty(QTY), w.far)
        lab.note("crash.rehearsal")
        lab.target.open(lab.conn.name, path)
        with lab.setup():  # a claim that fails here ends the check: nothing to reopen for
            lab.claim(w.name("A"), now=w.t0, lease_ms=w.lease_ms)
        lab.target.open(lab.conn.name, lab.path)
        statements = lab.statements_of(lab.calls)
        lab.note("crash.rehearsed", count=len(statements))
        return {"statements": statements, "row": store.get_job(conn, job)}
    finally:
        conn.close()


def fresh_database(lab: Lab, k: int, row: dict):
    """A database of its own for kill point k, in the same starting state as the check's (the
    one job, `row`)."""
    path = lab.dir / lab.world.file(f"crash-{k}")
    conn = store.connect(path)
    try:
        store.init_db(conn)
        insert_job(conn, row["id"], row["qty"], row["deadline"], row["max_attempts"])
    finally:
        conn.close()
    return path



def inspect(lab: Lab, c: children.Claimer, job: int, before: dict, full: dict) -> dict:
    """What one killed child left behind: journal, integrity, the row and its state."""
    o = c.outcome
    if o["kind"] == "grader-error":
        raise RuntimeError(f"claimer killed at {c.kill_at}: {o['error']}")
    if o["kind"] == "protocol-error":  # nothing that process said is believed: errored
        step = {"op": "claim", "actor": c.actor, "t": c.now, "lease_ms": c.lease_ms}
        raise CheckFailed(Failure(Outcome.ERRORED, Kind.PROTOCOL, error=o["error"], step=step,
                                  timeline=lab.timeline))
    if o["kind"] == "load-error":
        lab.fail_load(o["error_kind"], o["params"])
    if o["kind"] == "own-connection":  # it ran to its end on a connection nobody could stop
        lab.fail_own_connection("claim", o["paths"])
    if o["kind"] not in ("killed", "claim", "none"):
        lab.fail("crash-not-killed", step=c.kill_at, outcome=o.get("error") or o["kind"])
    journal = os.path.exists(c.path + "-journal")  # before anything reads (and rolls it back)
    own = c.path == str(lab.path)
    conn = lab.observer if own else store.connect(c.path)
    try:
        integrity = ", ".join(r[0] for r in conn.execute("PRAGMA integrity_check").fetchall())
        row = store.get_job(conn, job)
    finally:
        if not own:
            conn.close()
    state = "untouched" if row == before else "claimed" if row == full else "half"
    return {"step": c.kill_at, "sql": o.get("sql", ""), "killed": o["kind"] == "killed",
            "journal": journal, "integrity": integrity, "row": row, "state": state}


def narrate(lab: Lab, survived: list[str], found: dict) -> None:
    if survived:
        lab.note("crash.survived", steps=", ".join(survived))
    if found["killed"]:
        lab.note("crash.killed", step=found["step"], sql=sql_line(found["sql"]))
    if found["journal"]:
        lab.note("crash.journal")
    if found["state"] != "half":
        lab.note(f"crash.{found['state']}")


def judge(lab: Lab, found: dict, job: int, full: dict) -> None:
    if found["integrity"] != "ok":
        lab.fail("crash-integrity", result=found["integrity"])
    if found["state"] == "half":
        lab.fail("crash-half", diff=RowDiff(job, found["row"], full), job=job,
                 step=found["step"], sql=sql_line(found["sql"]))
