"""Shared steps for the single-process checks (tokens, stamps, selection, deadlines,
quarantine): a claim that must hand over a given job, a claim that must find nothing, a finish
that must be accepted or rejected. Each step checks the call's result and the rows it may touch,
so a failure always shows the row current vs expected at the step that went wrong.
"""

from __future__ import annotations

from lab.store import Claim

from .situations import done, leased
from grader.harness.judge.scenario import Lab


def claims(lab: Lab, role: str, now: int, job: int, *, token: int, attempt: int,
           lease_ms: int | None = None, detail: str | None = None, conn=None,
           **params) -> tuple[Claim, dict]:
    """The worker cast as `role` claims at `now` and must get `job` as its `token`-th
    generation (`attempt`-th claim), with the lease (default: the world's lease length) clamped
    to the job's deadline; on `conn` (default: the check's connection). Returns the claim and
    the new row."""
    owner = lab.world.name(role)
    lease_ms = lab.world.lease_ms if lease_ms is None else lease_ms
    before = lab.row(job)
    until = min(now + lease_ms, before["deadline"])
    got = lab.claim(owner, now=now, lease_ms=lease_ms, conn=conn)
    lab.expect(got, Claim(id=job, qty=before["qty"], owner=owner, token=token, attempt=attempt,
                          lease_until=until),
               job=job, row=leased(before, owner, token=token, attempts=attempt, lease_until=until),
               detail=detail, **params)
    return got, lab.row(job)


def claims_nothing(lab: Lab, role: str, now: int, rows: dict[int, dict], *,
                   lease_ms: int | None = None, detail: str | None = None, conn=None,
                   **params) -> None:
    """The worker cast as `role` claims at `now` (on `conn`, default: the check's connection)
    and must get None, leaving every row in `rows` (job -> row) as given."""
    lease_ms = lab.world.lease_ms if lease_ms is None else lease_ms
    got = lab.claim(lab.world.name(role), now=now, lease_ms=lease_ms, conn=conn)
    first, *others = rows
    lab.expect(got, None, job=first, row=rows[first], detail=detail, **params)
    expect_rows(lab, {job: rows[job] for job in others}, detail=detail, **params)


def finishes(lab: Lab, claim: Claim, now: int, *, accepted: bool, job: int | None = None,
             detail: str | None = None, actor: str | None = None, conn=None,
             **params) -> dict:
    """Finish with `claim` at `now`: accepted -> True and the row done at `now`; rejected ->
    False and the row exactly as before. `job` is the row to watch (default: the claim's);
    `actor`, the role shown as finishing (default: the stamp's owner); `conn`, the connection
    (default: the check's). Returns the row afterwards."""
    job = claim.id if job is None else job
    before = lab.row(job)
    got = lab.finish(claim, now=now, conn=conn,
                     actor=None if actor is None else lab.world.name(actor))
    lab.expect(got, accepted, job=job, row=done(before, now) if accepted else before,
               detail=detail, **params)
    return lab.row(job)


def expect_rows(lab: Lab, rows: dict[int, dict], detail: str | None = None, **params) -> None:
    """Every row in `rows` (job -> row) is exactly as given."""
    for job, row in rows.items():
        lab.expect_row(job, row, detail=detail, **params)


def snapshot(lab: Lab, *jobs: int) -> dict[int, dict]:
    """The current rows of `jobs`, to compare with later (job -> row)."""
    return {job: lab.row(job) for job in jobs}
