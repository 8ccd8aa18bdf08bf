"""finish applies a stamp only when it matches the current row in every field: a stamp with
any one field changed is rejected and leaves the row untouched, and a stamp counts only once."""

from __future__ import annotations

import dataclasses

from lab.store import Claim

from grader.checkdef import check
from .situations import a_holds_the_job
from .steps import claims, expect_rows, finishes
from grader.harness.scenario import Lab

FINISH_AT = 500  # well inside both leases: only the stamp decides


def a_and_b_hold_jobs(lab: Lab) -> tuple[Claim, Claim, dict[int, dict]]:
    """0 ms: A claims job 1 (qty=5); 10 ms: B claims job 2 (qty=7, lease_until=1010).
    Returns both claims and both rows (job -> row). The check's setup."""
    job_a, a, _ = a_holds_the_job(lab)
    with lab.setup():
        job_b = lab.enqueue(qty=7)
        b, _ = claims(lab, "B", now=10, job=job_b, token=1, attempt=1)
        return a, b, {job_a: lab.row(job_a), job_b: lab.row(job_b)}


def forged_stamp_is_rejected(lab: Lab, field: str, forge) -> None:
    """A finishes with its claim but `field` changed to `forge(a, b)`: rejected, both rows
    untouched; A's genuine stamp is accepted afterwards."""
    a, b, rows = a_and_b_hold_jobs(lab)
    forged = dataclasses.replace(a, **{field: forge(a, b)})
    lab.note("timeline.note.stamps.forged", field=field, real=getattr(a, field),
             forged=getattr(forged, field))
    finishes(lab, forged, now=FINISH_AT, accepted=False, actor="A",
             detail=f"stamps.forged-{field}-accepted", real=getattr(a, field),
             forged=getattr(forged, field))
    expect_rows(lab, rows, detail=f"stamps.forged-{field}-accepted", real=getattr(a, field),
                forged=getattr(forged, field))
    lab.note("timeline.note.stamps.genuine")
    finishes(lab, a, now=FINISH_AT, accepted=True, detail="stamps.genuine-rejected")


@check("forged-stamp-id", points=1)
def test_forged_stamp_id(lab):
    """A's stamp with B's job id: must not finish B's job (nor A's own)."""
    forged_stamp_is_rejected(lab, "id", lambda a, b: b.id)


@check("forged-stamp-owner", points=1)
def test_forged_stamp_owner(lab):
    """A's stamp with another worker's name."""
    forged_stamp_is_rejected(lab, "owner", lambda a, b: b.owner)


@check("forged-stamp-token", points=1)
def test_forged_stamp_token(lab):
    """A's stamp with a token of another generation."""
    forged_stamp_is_rejected(lab, "token", lambda a, b: a.token + 1)


@check("forged-stamp-attempt", points=1)
def test_forged_stamp_attempt(lab):
    """A's stamp with another attempt number."""
    forged_stamp_is_rejected(lab, "attempt", lambda a, b: a.attempt + 1)


@check("forged-stamp-lease-until", points=1)
def test_forged_stamp_lease_until(lab):
    """A's stamp claiming a longer lease than the row holds."""
    forged_stamp_is_rejected(lab, "lease_until", lambda a, b: a.lease_until + 500)


@check("double-finish-rejected", points=1)
def test_double_finish_rejected(lab):
    """A finishes (True), then finishes again with the same stamp (False): the row stays as the
    first finish left it, finished_at included."""
    job, a, _ = a_holds_the_job(lab)
    with lab.setup():
        finishes(lab, a, now=FINISH_AT, accepted=True, detail="stamps.genuine-rejected")
    finishes(lab, a, now=FINISH_AT + 100, accepted=False, detail="stamps.double-finish-accepted",
             first=FINISH_AT)


@check("finish-on-quarantined-rejected", points=1)
def test_finish_on_quarantined_rejected(lab):
    """A holds the job (lease to 1000); at 200 ms an operator quarantines it by hand. A's finish
    at 500, with a stamp that still matches every field, is rejected: the row stays quarantined."""
    job, a, _ = a_holds_the_job(lab)
    lab.note("stamps.quarantined-by-operator", job=job, now=200)
    lab.set_row(job, status="quarantined")
    finishes(lab, a, now=FINISH_AT, accepted=False, detail="stamps.quarantined-finish-accepted",
             job_id=job)
