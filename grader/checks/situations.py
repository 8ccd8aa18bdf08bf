"""Situations the checks start from, told the way the lesson tells them."""

from __future__ import annotations

from lab.store import Claim

from grader.harness.scenario import Lab, expected_row

LEASE_MS = 1000
DEADLINE = 1_000_000  # far away, unless a check is about deadlines


def a_holds_the_job(lab: Lab, qty: int = 5, max_attempts: int = 3,
                    deadline: int = DEADLINE) -> tuple[int, Claim, dict]:
    """0 ms: a job is enqueued and A claims it (token=1, lease_until=1000).

    Returns the job id, A's claim and the row as it must be right after the claim. It is the
    check's setup: if the claim itself is wrong, the check stops here, reported as a setup step
    that went wrong, with the row side by side."""
    with lab.setup():
        job = lab.enqueue(qty=qty, deadline=deadline, max_attempts=max_attempts)
        before = lab.row(job)
        a = lab.claim("A", now=0, lease_ms=LEASE_MS)
        until = min(LEASE_MS, deadline)
        lab.expect(a, Claim(id=job, qty=qty, owner="A", token=1, attempt=1, lease_until=until),
                   job=job, row=leased(before, "A", token=1, attempts=1, lease_until=until))
        return job, a, lab.row(job)


def leased(row: dict, owner: str, token: int, attempts: int, lease_until: int) -> dict:
    return expected_row(row, status="leased", owner=owner, token=token, attempts=attempts,
                        lease_until=lease_until)


def done(row: dict, now: int) -> dict:
    return expected_row(row, status="done", finished_at=now)
