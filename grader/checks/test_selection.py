"""Which job a claim takes, and what it hands back: the claimable job with the lowest id, never
a done or quarantined one, and a Claim holding exactly the values now stored in the row."""

from __future__ import annotations

from grader.checkdef import check
from .steps import claims, claims_nothing, expect_rows, finishes, snapshot
from grader.harness.scenario import expected_row


@check("claim-result-matches-row", points=2)
def test_claim_result_matches_row(lab):
    """A job that was requeued before (token already 3) is claimed twice: each Claim carries the
    row's id, qty, owner, token, attempts and lease_until, not values of its own."""
    job = lab.enqueue(qty=37)
    lab.set_row(job, token=3)
    lab.note("timeline.note.selection.token-from-history", job=job, token=3)
    claims(lab, "A", now=0, job=job, token=4, attempt=1, detail="selection.claim-not-row")
    claims(lab, "B", now=1500, job=job, token=5, attempt=2, lease_ms=700,
           detail="selection.claim-not-row")


@check("lowest-id-first", points=2)
def test_lowest_id_first(lab):
    """Jobs 1 and 3 have expired leases, job 2 a valid one, job 4 was never claimed: claims take
    1, 3, 4 in that order, then nothing is left."""
    jobs = [lab.enqueue(qty=qty) for qty in (11, 12, 13, 14)]
    for job, owner, lease_ms in zip(jobs, ("X", "Y", "W"), (100, 10_000, 100)):
        claims(lab, owner, now=0, job=job, token=1, attempt=1, lease_ms=lease_ms,
               detail="selection.not-lowest-id")
    claimable = (jobs[0], jobs[2], jobs[3])
    lab.note("timeline.note.selection.claimable-now", jobs=", ".join(map(str, claimable)), now=200)
    for job, owner, token in zip(claimable, ("P", "Q", "R"), (2, 2, 1)):
        claims(lab, owner, now=200, job=job, token=token, attempt=token,
               detail="selection.not-lowest-id")
    claims_nothing(lab, "S", now=200, rows=snapshot(lab, *jobs), detail="selection.took-held-job")


@check("skips-done-and-quarantined", points=2)
def test_skips_done_and_quarantined(lab):
    """Job 1 is done, job 2 quarantined after its only attempt, job 3 quarantined by hand with
    attempts to spare: later claims take job 4 only and leave jobs 1-3 byte-for-byte alone."""
    with lab.setup():
        done_job = lab.enqueue(qty=5, deadline=3000)
        spent_job = lab.enqueue(qty=6, max_attempts=1)
        held_job = lab.enqueue(qty=7)
        a, _ = claims(lab, "A", now=0, job=done_job, token=1, attempt=1)
        finishes(lab, a, now=10, accepted=True)
        lab.set_row(held_job, status="quarantined")
        lab.note("timeline.note.selection.quarantined-by-hand", job=held_job)
        claims(lab, "B", now=20, job=spent_job, token=1, attempt=1)
    rows = snapshot(lab, done_job, spent_job, held_job)
    rows[spent_job] = expected_row(rows[spent_job], status="quarantined")
    claims_nothing(lab, "C", now=1020, rows=rows, detail="selection.only-spent-job-changes",
                   which=spent_job, at=1020)
    fresh = lab.enqueue(qty=8)
    lab.note("timeline.note.selection.past-leases", job=done_job, now=2000)
    claims(lab, "D", now=2000, job=fresh, token=1, attempt=1, detail="selection.took-finished-job")
    expect_rows(lab, rows, detail="selection.touched-finished-job")
    lab.note("timeline.note.selection.past-deadline", job=done_job, now=5000)
    claims(lab, "E", now=5000, job=fresh, token=2, attempt=2, detail="selection.took-finished-job")
    expect_rows(lab, rows, detail="selection.touched-finished-job")


@check("empty-queue-returns-none", points=1)
def test_empty_queue_returns_none(lab):
    """With no job, and then with only a held job and a done one, claim returns None and
    leaves no transaction open."""
    lab.expect(lab.claim("A", now=0, lease_ms=1000), None)
    lab.expect(lab.conn.in_transaction, False,
               detail="selection.none-left-transaction-open")
    with lab.setup():
        held = lab.enqueue(qty=5)
        claims(lab, "A", now=0, job=held, token=1, attempt=1)
        finished = lab.enqueue(qty=6)
        b, _ = claims(lab, "B", now=0, job=finished, token=1, attempt=1)
        finishes(lab, b, now=10, accepted=True)
    claims_nothing(lab, "C", now=500, rows=snapshot(lab, held, finished))
    lab.expect(lab.conn.in_transaction, False, detail="selection.none-left-transaction-open")
