"""Quarantine: a job whose lease is not valid and that has used up its attempts or passed its
deadline leaves the queue before any new token is given; a valid lease is never quarantined."""

from __future__ import annotations

import sqlite3

from grader.checkdef import check
from .situations import a_holds_the_job
from .steps import claims, claims_nothing, finishes, snapshot
from grader.harness.judge.outcomes import expected_row, judge_write


def quarantined(row: dict) -> dict:
    """`row` moved to quarantine and nothing else changed (no new token, same owner...)."""
    return expected_row(row, status="quarantined")


@check("quarantine-before-new-token", points=3)
def test_quarantine_before_new_token(lab):
    """max_attempts=2: A claims, expires, B claims, expires; C's claim quarantines the job
    before any new token: C gets nothing, the row keeps token=2, attempts=2, owner B."""
    job, a, _ = a_holds_the_job(lab, max_attempts=2)
    with lab.setup():
        b, row = claims(lab, "B", now=a.lease_until, job=job, token=2, attempt=2)
    lab.note("timeline.note.quarantine.attempts-used", job=job, max_attempts=2)
    claims_nothing(lab, "C", now=b.lease_until, rows={job: quarantined(row)},
                   detail="quarantine.not-before-new-token")


@check("quarantine-spares-valid-lease", points=2)
def test_quarantine_spares_valid_lease(lab):
    """A holds the job on its last attempt (max_attempts=1): claims by others before
    lease_until neither take nor quarantine it, and A's finish lands."""
    w = lab.world
    job, a, row = a_holds_the_job(lab, max_attempts=1)
    lab.note("timeline.note.quarantine.last-attempt", job=job, lease_until=a.lease_until)
    for now, role in ((w.t0, "B"), (w.t0 + 1, "C"), (w.t0 + w.lease_ms // 2, "B"),
                      (a.lease_until - 1, "C")):
        claims_nothing(lab, role, now, {job: row}, detail="quarantine.valid-lease-quarantined",
                       at=now, lease_until=a.lease_until)
    finishes(lab, a, now=a.lease_until - 1, accepted=True,
             detail="quarantine.holder-finish-rejected")


# a thousand due jobs: a correct claim that quarantines them one UPDATE at a time takes its time
@check("quarantine-past-deadline", points=2, timeout=15.0)
def test_quarantine_past_deadline(lab):
    """At 1000 ms job 1 (lease expired at 400, deadline 500) and job 3 (never claimed, deadline
    exactly 1000) are both quarantined, tokens unchanged, by the claim that hands job 2 to B.
    Then 1000 jobs come due at once (at 1010 ms, B's lease still valid): C's claim quarantines
    every one of them, not the first few (nor a first batch of 500)."""
    w = lab.world
    at = w.t0 + w.pick("at", 1000, 3, 10 * w.lease_ms)
    late_deadline = w.t0 + w.pick("late-deadline", 500, 2, at - w.t0 - 1)
    late_lease = w.pick("late-lease", 400, 1, late_deadline - w.t0 - 1)
    with lab.setup():
        late = lab.enqueue(qty=5, deadline=late_deadline)
        claimable = lab.enqueue(qty=6)
        due_now = lab.enqueue(qty=7, deadline=at)
        claims(lab, "A", now=w.t0, job=late, token=1, attempt=1, lease_ms=late_lease)
    rows = snapshot(lab, late, due_now)
    lab.note("timeline.note.quarantine.deadlines-pass", jobs=f"{late}, {due_now}", now=at)
    claims(lab, "B", now=at, job=claimable, token=1, attempt=1,
           detail="quarantine.claimable-not-taken")
    for job, row in rows.items():
        lab.expect_row(job, quarantined(row), detail="quarantine.past-deadline-not-quarantined",
                       which=job, deadline=row["deadline"], at=at)
    expect_crowd_quarantined(lab, after=at)


def expect_crowd_quarantined(lab, after: int) -> None:
    """A thousand jobs or more due at the same instant, enqueued at once by the grader (one line on
    the timeline); the next claim must quarantine every one of them: a claim that quarantines
    a batch (LIMIT n) or looks at the first few jobs leaves the rest pending past their
    deadline. B's lease (from `after`) is still valid then, so nothing is claimable."""
    w = lab.world
    due = after + w.pick("crowd-due", 10, 1, w.lease_ms - 1)
    crowd = [w.next_id() for _ in range(w.pick("crowd", 1000, 600, 1500))]
    with judge_write():  # found locked: a lock the code under grade still holds
        try:
            lab.observer.execute("BEGIN IMMEDIATE")
            lab.observer.executemany(
                "INSERT INTO jobs(id, qty, deadline, max_attempts) VALUES (?, ?, ?, 3)",
                [(job, w.qty(1), due) for job in crowd])
            lab.observer.execute("COMMIT")
        except sqlite3.OperationalError:
            if lab.observer.in_transaction:
                lab.observer.execute("ROLLBACK")
            raise
    pending = lab.row(crowd[0])
    lab.note("timeline.note.quarantine.crowd-due", count=len(crowd), first=crowd[0],
             last=crowd[-1], deadline=due)
    lab.claim(w.name("C"), now=due, lease_ms=w.lease_ms)
    left = lab.observer.execute(
        "SELECT id FROM jobs WHERE id BETWEEN ? AND ? AND status != 'quarantined' ORDER BY id"
        " LIMIT 1", (crowd[0], crowd[-1])).fetchone()
    if left is not None:
        lab.expect_row(left[0], quarantined({**pending, "id": left[0]}),
                       detail="quarantine.crowd-not-quarantined", which=left[0],
                       count=len(crowd), deadline=due, at=due)
