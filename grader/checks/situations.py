"""Situations the checks start from, told the way the lesson tells them.

Times are the check's world's (`lab.world`, grader.harness.judge.world): `w.t0` is when the story
starts (0 ms in the lesson), `w.lease_ms` how long a lease lasts (1000 ms in the lesson). Workers
are cast by role ("A", "B"...), and get the names the world gives those roles.
"""

from __future__ import annotations

from lab.store import Claim

from grader.harness.judge.outcomes import expected_row
from grader.harness.judge.scenario import Lab


def a_holds_the_job(lab: Lab, qty: int = 5, max_attempts: int = 3,
                    deadline: int | None = None) -> tuple[int, Claim, dict]:
    """t0: a job is enqueued and A claims it (token=1, lease_until=t0+lease_ms).

    Returns the job id, A's claim and the row as it must be right after the claim. It is the
    check's setup: if the claim itself is wrong, the check stops here, reported as a setup step
    that went wrong, with the row side by side."""
    w = lab.world
    with lab.setup():
        job = lab.enqueue(qty=qty, deadline=deadline, max_attempts=max_attempts)
        before = lab.row(job)
        a = lab.claim(w.name("A"), now=w.t0, lease_ms=w.lease_ms)
        until = min(w.t0 + w.lease_ms, before["deadline"])
        lab.expect(a, Claim(id=job, qty=before["qty"], owner=w.name("A"), token=1, attempt=1,
                            lease_until=until),
                   job=job, row=leased(before, w.name("A"), token=1, attempts=1,
                                       lease_until=until))
        return job, a, lab.row(job)


def leased(row: dict, owner: str, token: int, attempts: int, lease_until: int) -> dict:
    return expected_row(row, status="leased", owner=owner, token=token, attempts=attempts,
                        lease_until=lease_until)


def done(row: dict, now: int) -> dict:
    return expected_row(row, status="done", finished_at=now)
