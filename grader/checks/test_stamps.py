"""finish applies a stamp only when it matches the current row in every field: a stamp with
any one field changed is rejected and leaves the row untouched, and a stamp counts only once."""

from __future__ import annotations

import dataclasses

from lab.store import Claim

from grader.checkdef import check
from .situations import a_holds_the_job
from .steps import claims, expect_rows, finishes
from grader.harness.judge.scenario import Lab


def finish_at(lab: Lab) -> int:
    """Halfway through A's lease (500 ms in the lesson): well inside both leases, so only the
    stamp decides."""
    return lab.world.t0 + lab.world.lease_ms // 2


def a_and_b_hold_jobs(lab: Lab) -> tuple[Claim, Claim, dict[int, dict]]:
    """0 ms: A claims job 1 (qty=5); 10 ms: B claims job 2 (qty=7, lease_until=1010).
    Returns both claims and both rows (job -> row). The check's setup."""
    w = lab.world
    job_a, a, _ = a_holds_the_job(lab)
    with lab.setup():
        job_b = lab.enqueue(qty=7)
        b_at = w.t0 + w.pick("b-claims", 10, 1, w.lease_ms // 2 - 1)
        b, _ = claims(lab, "B", now=b_at, job=job_b, token=1, attempt=1)
        return a, b, {job_a: lab.row(job_a), job_b: lab.row(job_b)}


def forged_stamp_is_rejected(lab: Lab, field: str, *forges, genuine=None) -> None:
    """A finishes with its claim but `field` changed to `forge(a, b)`, once for each forge
    (each on the stamp as claimed): each rejected, both rows untouched; A's genuine stamp is
    accepted afterwards (`genuine`: with its qty `genuine(a, b)`, a field the match leaves
    out). A field with an order is forged both above and below the row's value, so a finish
    that compares it one-sidedly (`>=` or `<=` instead of `=`) fails whichever way it leans."""
    a, b, rows = a_and_b_hold_jobs(lab)
    for forge in forges:
        forged = dataclasses.replace(a, **{field: forge(a, b)})
        lab.note("timeline.note.stamps.forged", field=field, real=getattr(a, field),
                 forged=getattr(forged, field))
        finishes(lab, forged, now=finish_at(lab), accepted=False, actor="A",
                 detail=f"stamps.forged-{field}-accepted", real=getattr(a, field),
                 forged=getattr(forged, field))
        expect_rows(lab, rows, detail=f"stamps.forged-{field}-accepted",
                    real=getattr(a, field), forged=getattr(forged, field))
    if genuine is not None:
        a = dataclasses.replace(a, qty=genuine(a, b))
        lab.note("timeline.note.stamps.genuine-other-qty", qty=a.qty)
        finishes(lab, a, now=finish_at(lab), accepted=True,
                 detail="stamps.genuine-other-qty-rejected", qty=a.qty)
        return
    lab.note("timeline.note.stamps.genuine")
    finishes(lab, a, now=finish_at(lab), accepted=True, detail="stamps.genuine-rejected")


@check("forged-stamp-id", points=1)
def test_forged_stamp_id(lab):
    """A's stamp with B's job id: must not finish B's job (nor A's own). Then A's genuine
    stamp, but with B's qty: accepted, since the stamp is matched on id, owner, token, attempt
    and lease_until, and qty is not among them (the contract's list)."""
    forged_stamp_is_rejected(lab, "id", lambda a, b: b.id, genuine=lambda a, b: b.qty)


@check("forged-stamp-owner", points=1)
def test_forged_stamp_owner(lab):
    """A's stamp with another worker's name, then with A's own name in another letter case
    (`case_variant`), then with a pattern that matches A's name (its first letter and `*`):
    names are compared exactly, as SQLite's `=` compares text (a COLLATE NOCASE, a LIKE or a
    lower() on both sides would let the second one through, a GLOB the third)."""
    forged_stamp_is_rejected(lab, "owner", lambda a, b: b.owner,
                             lambda a, b: case_variant(a.owner), lambda a, b: a.owner[:1] + "*")


def case_variant(name: str) -> str:
    """`name` in another letter case (swapcase); a name with no letters that have a case gets a
    trailing space instead (still another name, one a trim would take for it)."""
    variant = name.swapcase()
    return variant if variant != name else name + " "


@check("forged-stamp-token", points=1)
def test_forged_stamp_token(lab):
    """A's stamp with a token of another generation: a later one (token + 1), then an earlier
    one (token - 1)."""
    forged_stamp_is_rejected(lab, "token", lambda a, b: a.token + 1, lambda a, b: a.token - 1)


@check("forged-stamp-attempt", points=1)
def test_forged_stamp_attempt(lab):
    """A's stamp with another attempt number: a higher one (attempt + 1), then a lower one
    (attempt - 1)."""
    forged_stamp_is_rejected(lab, "attempt", lambda a, b: a.attempt + 1,
                             lambda a, b: a.attempt - 1)


@check("forged-stamp-lease-until", points=1)
def test_forged_stamp_lease_until(lab):
    """A's stamp claiming a longer lease than the row holds, then a shorter one that would
    still be running at the finish (500 ms in the lesson): only the comparison with the row's
    lease_until can reject it."""
    w = lab.world
    longer = w.pick("longer-by", 500, 1, 10 * w.lease_ms)
    # the finish comes halfway through the lease: an end up to lease_ms // 2 - 1 earlier is
    # still after it
    shorter = w.pick("shorter-by", 250, 1, w.lease_ms - w.lease_ms // 2 - 1)
    forged_stamp_is_rejected(lab, "lease_until", lambda a, b: a.lease_until + longer,
                             lambda a, b: a.lease_until - shorter)


@check("double-finish-rejected", points=1)
def test_double_finish_rejected(lab):
    """A finishes (True), then finishes again with the same stamp (False): the row stays as the
    first finish left it, finished_at included."""
    w = lab.world
    job, a, _ = a_holds_the_job(lab)
    first = finish_at(lab)
    with lab.setup():
        finishes(lab, a, now=first, accepted=True, detail="stamps.genuine-rejected")
    again = first + w.pick("again-after", 100, 1, w.lease_ms // 2 - 1)
    finishes(lab, a, now=again, accepted=False, detail="stamps.double-finish-accepted",
             first=first)


@check("finish-on-quarantined-rejected", points=1)
def test_finish_on_quarantined_rejected(lab):
    """A holds the job (lease to 1000); at 200 ms an operator quarantines it by hand. A's finish
    at 500, with a stamp that still matches every field, is rejected: the row stays quarantined."""
    w = lab.world
    job, a, _ = a_holds_the_job(lab)
    lab.note("stamps.quarantined-by-operator", job=job,
             now=w.t0 + w.pick("quarantined-at", 200, 1, w.lease_ms // 2 - 1))
    lab.set_row(job, status="quarantined")
    finishes(lab, a, now=finish_at(lab), accepted=False, detail="stamps.quarantined-finish-accepted",
             job_id=job)
