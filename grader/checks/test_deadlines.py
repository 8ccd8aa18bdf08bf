"""The lease never outlives the job's own deadline: a claim clamps lease_until to the deadline,
and a finish is accepted only before it, whatever the lease says."""

from __future__ import annotations

from grader.checkdef import check
from grader.harness.judge.scenario import Lab
from .steps import claims, finishes


def short_deadline(lab: Lab) -> int:
    """A deadline before the lease would end (100 ms in the lesson, leases of 1000 ms)."""
    w = lab.world
    return w.t0 + w.pick("deadline", 100, 1, w.lease_ms - 1)


@check("deadline-clamp", points=2)
def test_deadline_clamp(lab):
    """deadline=100, now=0, lease_ms=1000: the Claim and the row both say lease_until=100."""
    deadline = short_deadline(lab)
    job = lab.enqueue(qty=5, deadline=deadline)
    claims(lab, "A", now=lab.world.t0, job=job, token=1, attempt=1,
           detail="deadlines.lease-outlives-deadline", deadline=deadline)


@check("finish-at-deadline", points=2)
def test_finish_at_deadline(lab):
    """With leases clamped to deadline=100: a finish at 99 is accepted (job 1), a finish at
    exactly 100 is rejected and leaves the row unchanged (job 2)."""
    t0, deadline = lab.world.t0, short_deadline(lab)
    with lab.setup():
        jobs = [lab.enqueue(qty=qty, deadline=deadline) for qty in (5, 6)]
        a, _ = claims(lab, "A", now=t0, job=jobs[0], token=1, attempt=1)
        b, _ = claims(lab, "B", now=t0, job=jobs[1], token=1, attempt=1)
    finishes(lab, a, now=deadline - 1, accepted=True, detail="deadlines.finish-before-rejected",
             deadline=deadline)
    finishes(lab, b, now=deadline, accepted=False, detail="deadlines.finish-at-accepted",
             deadline=deadline)


@check("finish-at-moved-deadline", points=1)
def test_finish_at_moved_deadline(lab):
    """A and B claim at 0 ms (leases to 1000); the deadlines are then moved to 500. A finish at
    499 is accepted (job 1); at exactly 500 it is rejected though the lease runs on (job 2)."""
    w = lab.world
    moved = w.t0 + w.pick("moved-deadline", 500, 1, w.lease_ms - 1)
    with lab.setup():
        jobs = [lab.enqueue(qty=qty) for qty in (5, 6)]
        a, _ = claims(lab, "A", now=w.t0, job=jobs[0], token=1, attempt=1)
        b, _ = claims(lab, "B", now=w.t0, job=jobs[1], token=1, attempt=1)
    lab.note("deadlines.moved", deadline=moved, lease_until=a.lease_until)
    for job in jobs:
        lab.set_row(job, deadline=moved)
    finishes(lab, a, now=moved - 1, accepted=True,
             detail="deadlines.moved-finish-before-rejected", deadline=moved,
             lease_until=a.lease_until)
    finishes(lab, b, now=moved, accepted=False,
             detail="deadlines.moved-finish-at-accepted", deadline=moved,
             lease_until=b.lease_until)
