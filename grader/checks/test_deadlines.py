"""The lease never outlives the job's own deadline: a claim clamps lease_until to the deadline,
and a finish is accepted only before it, whatever the lease says."""

from __future__ import annotations

from grader.checkdef import check
from .steps import claims, finishes

DEADLINE = 100


@check("deadline-clamp", points=2)
def test_deadline_clamp(lab):
    """deadline=100, now=0, lease_ms=1000: the Claim and the row both say lease_until=100."""
    job = lab.enqueue(qty=5, deadline=DEADLINE)
    claims(lab, "A", now=0, job=job, token=1, attempt=1, lease_ms=1000,
           detail="deadlines.lease-outlives-deadline", deadline=DEADLINE)


@check("finish-at-deadline", points=2)
def test_finish_at_deadline(lab):
    """With leases clamped to deadline=100: a finish at 99 is accepted (job 1), a finish at
    exactly 100 is rejected and leaves the row unchanged (job 2)."""
    with lab.setup():
        jobs = [lab.enqueue(qty=qty, deadline=DEADLINE) for qty in (5, 6)]
        a, _ = claims(lab, "A", now=0, job=jobs[0], token=1, attempt=1, lease_ms=1000)
        b, _ = claims(lab, "B", now=0, job=jobs[1], token=1, attempt=1, lease_ms=1000)
    finishes(lab, a, now=DEADLINE - 1, accepted=True, detail="deadlines.finish-before-rejected",
             deadline=DEADLINE)
    finishes(lab, b, now=DEADLINE, accepted=False, detail="deadlines.finish-at-accepted",
             deadline=DEADLINE)


MOVED_DEADLINE = 500


@check("finish-at-moved-deadline", points=1)
def test_finish_at_moved_deadline(lab):
    """A and B claim at 0 ms (leases to 1000); the deadlines are then moved to 500. A finish at
    499 is accepted (job 1); at exactly 500 it is rejected though the lease runs on (job 2)."""
    with lab.setup():
        jobs = [lab.enqueue(qty=qty) for qty in (5, 6)]
        a, _ = claims(lab, "A", now=0, job=jobs[0], token=1, attempt=1)
        b, _ = claims(lab, "B", now=0, job=jobs[1], token=1, attempt=1)
    lab.note("deadlines.moved", deadline=MOVED_DEADLINE)
    for job in jobs:
        lab.set_row(job, deadline=MOVED_DEADLINE)
    finishes(lab, a, now=MOVED_DEADLINE - 1, accepted=True,
             detail="deadlines.moved-finish-before-rejected", deadline=MOVED_DEADLINE,
             lease_until=a.lease_until)
    finishes(lab, b, now=MOVED_DEADLINE, accepted=False,
             detail="deadlines.moved-finish-at-accepted", deadline=MOVED_DEADLINE,
             lease_until=b.lease_until)
