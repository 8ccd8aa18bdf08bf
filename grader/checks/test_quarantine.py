"""Quarantine: a job whose lease is not valid and that has used up its attempts or passed its
deadline leaves the queue before any new token is given; a valid lease is never quarantined."""

from __future__ import annotations

from grader.checkdef import check
from .situations import LEASE_MS, a_holds_the_job
from .steps import claims, claims_nothing, finishes, snapshot
from grader.harness.scenario import expected_row


def quarantined(row: dict) -> dict:
    """`row` moved to quarantine and nothing else changed (no new token, same owner...)."""
    return expected_row(row, status="quarantined")


@check("quarantine-before-new-token", points=3)
def test_quarantine_before_new_token(lab):
    """max_attempts=2: A claims, expires, B claims, expires; C's claim quarantines the job
    before any new token: C gets nothing, the row keeps token=2, attempts=2, owner B."""
    job, _, _ = a_holds_the_job(lab, max_attempts=2)
    with lab.setup():
        _, row = claims(lab, "B", now=LEASE_MS, job=job, token=2, attempt=2)
    lab.note("timeline.note.quarantine.attempts-used", job=job, max_attempts=2)
    claims_nothing(lab, "C", now=2 * LEASE_MS, rows={job: quarantined(row)},
                   detail="quarantine.not-before-new-token")


@check("quarantine-spares-valid-lease", points=2)
def test_quarantine_spares_valid_lease(lab):
    """A holds the job on its last attempt (max_attempts=1): claims by others before
    lease_until neither take nor quarantine it, and A's finish lands."""
    job, a, row = a_holds_the_job(lab, max_attempts=1)
    lab.note("timeline.note.quarantine.last-attempt", job=job, lease_until=a.lease_until)
    for now, owner in ((0, "B"), (1, "C"), (LEASE_MS // 2, "B"), (LEASE_MS - 1, "C")):
        claims_nothing(lab, owner, now, {job: row}, detail="quarantine.valid-lease-quarantined",
                       at=now, lease_until=a.lease_until)
    finishes(lab, a, now=LEASE_MS - 1, accepted=True, detail="quarantine.holder-finish-rejected")


@check("quarantine-past-deadline", points=2)
def test_quarantine_past_deadline(lab):
    """At 1000 ms job 1 (lease expired at 400, deadline 500) and job 3 (never claimed, deadline
    exactly 1000) are both quarantined, tokens unchanged, by the claim that hands job 2 to B."""
    with lab.setup():
        late = lab.enqueue(qty=5, deadline=500)
        claimable = lab.enqueue(qty=6)
        due_now = lab.enqueue(qty=7, deadline=1000)
        claims(lab, "A", now=0, job=late, token=1, attempt=1, lease_ms=400)
    rows = snapshot(lab, late, due_now)
    lab.note("timeline.note.quarantine.deadlines-pass", jobs=f"{late}, {due_now}", now=1000)
    claims(lab, "B", now=1000, job=claimable, token=1, attempt=1,
           detail="quarantine.claimable-not-taken")
    for job, row in rows.items():
        lab.expect_row(job, quarantined(row), detail="quarantine.past-deadline-not-quarantined",
                       which=job, deadline=row["deadline"], at=1000)
