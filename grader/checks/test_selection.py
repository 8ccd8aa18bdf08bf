"""Which job a claim takes, and what it hands back: the claimable job with the lowest id, never
a done or quarantined one, and a Claim holding exactly the values now stored in the row."""

from __future__ import annotations

import sqlite3

from lab.store import Claim

from grader.checkdef import check
from .steps import claims, claims_nothing, expect_rows, finishes, snapshot
from grader.harness.judge.outcomes import expected_row, judge_write


@check("claim-result-matches-row", points=2)
def test_claim_result_matches_row(lab):
    """A job that was requeued before (token already 3) is claimed twice: each Claim carries the
    row's id, qty, owner, token, attempts and lease_until, not values of its own."""
    w = lab.world
    job = lab.enqueue(qty=37)
    token = w.pick("token-before", 3, 2, 50)
    lab.set_row(job, token=token)
    lab.note("timeline.note.selection.token-from-history", job=job, token=token)
    claims(lab, "A", now=w.t0, job=job, token=token + 1, attempt=1,
           detail="selection.claim-not-row")
    later = w.t0 + w.lease_ms + w.pick("b-after-expiry", 500, 0, w.lease_ms)
    claims(lab, "B", now=later, job=job, token=token + 2, attempt=2,
           lease_ms=w.pick("b-lease", 700, 1, 10 * w.lease_ms), detail="selection.claim-not-row")


# thousands of held jobs: a correct claim may read every one of them (`expect_crowd_held`)
@check("lowest-id-first", points=2, timeout=15.0)
def test_lowest_id_first(lab):
    """Jobs 1 and 3 have expired leases, job 2 a valid one, job 4 was never claimed: claims take
    1, 3, 4 in that order, then nothing is left. Then thousands of held jobs come before one
    pending job (`expect_crowd_held`): it is still the one claimed, and its finish lands."""
    w = lab.world
    short = w.pick("short-lease", 100, 1, w.lease_ms)
    long = w.pick("long-lease", 10_000, 2 * w.lease_ms, 20 * w.lease_ms)
    at = w.t0 + w.pick("at", 200, short, long - 1)  # the short leases have run out, not the long
    jobs = [lab.enqueue(qty=qty) for qty in (11, 12, 13, 14)]
    for job, role, lease_ms in zip(jobs, ("X", "Y", "W"), (short, long, short)):
        claims(lab, role, now=w.t0, job=job, token=1, attempt=1, lease_ms=lease_ms,
               detail="selection.not-lowest-id")
    claimable = (jobs[0], jobs[2], jobs[3])
    lab.note("timeline.note.selection.claimable-now", jobs=", ".join(map(str, claimable)), now=at)
    for job, role, token in zip(claimable, ("P", "Q", "R"), (2, 2, 1)):
        claims(lab, role, now=at, job=job, token=token, attempt=token,
               detail="selection.not-lowest-id")
    claims_nothing(lab, "S", now=at, rows=snapshot(lab, *jobs), detail="selection.took-held-job")
    expect_crowd_held(lab, at, until=w.t0 + long)


#: What a long-lived queue's counters reach: past the small ints Python caches (256) and past
#: a 32-bit integer (2**31), so that a comparison of identity (`is`) or a narrow type shows.
BIG_TOKEN = 2 ** 31 + 250


def expect_crowd_held(lab, at: int, until: int) -> None:
    """Any number of jobs may be held at once: thousands of jobs held on valid leases (until
    `until`), set by the grader with tokens past 2**31 and attempts past 256, come before one
    pending job with a long history; T's claim at `at` takes that one (token and attempt one
    more), and T's finish lands. A claim that looks at the first few live rows only finds
    nothing; a finish that compares the stamp by identity rejects its own holder."""
    w = lab.world
    # more than a claim that looks at the first few thousand live rows sees (fetchmany(2500),
    # LIMIT 4096)
    held = [w.next_id() for _ in range(w.pick("crowd-held", 5000, 4200, 6000))]
    owner = w.name("X")
    rows = [(job, w.qty(1), owner, until, BIG_TOKEN + i, 300 + i % 7, w.far)
            for i, job in enumerate(held)]
    with judge_write():  # found locked: a lock the code under grade still holds
        try:
            lab.observer.execute("BEGIN IMMEDIATE")
            lab.observer.executemany(
                "INSERT INTO jobs(id, qty, status, owner, lease_until, token, attempts,"
                " max_attempts, deadline) VALUES (?, ?, 'leased', ?, ?, ?, ?, 1000, ?)", rows)
            lab.observer.execute("COMMIT")
        except sqlite3.OperationalError:
            if lab.observer.in_transaction:
                lab.observer.execute("ROLLBACK")
            raise
    job = lab.enqueue(qty=15, max_attempts=1000)
    token, attempts = BIG_TOKEN + len(held) + 1, 257
    with judge_write():
        lab.observer.execute("UPDATE jobs SET token = ?, attempts = ? WHERE id = ?",
                             (token, attempts, job))
    lab.note("timeline.note.selection.crowd-held", count=len(held), first=held[0],
             last=held[-1], lease_until=until, job=job, token=token, attempts=attempts)
    claim, _ = claims(lab, "T", now=at, job=job, token=token + 1, attempt=attempts + 1,
                      detail="selection.crowd-held-not-claimed", count=len(held), which=job)
    finishes(lab, claim, now=at, accepted=True, detail="selection.big-stamp-finish-rejected",
             token=claim.token, attempt=claim.attempt)


@check("skips-done-and-quarantined", points=2)
def test_skips_done_and_quarantined(lab):
    """Job 1 is done, job 2 quarantined after its only attempt, job 3 quarantined by hand with
    attempts to spare: later claims take job 4 only and leave jobs 1-3 byte-for-byte alone."""
    w = lab.world
    finished_at = w.t0 + w.pick("finished-after", 10, 1, w.lease_ms // 4)
    b_at = finished_at + w.pick("b-after", 10, 1, w.lease_ms // 4)
    c_at = b_at + w.lease_ms  # B's lease has just run out: its only attempt is spent
    d_at = c_at + w.pick("d-after", 980, 1, w.lease_ms)
    deadline = d_at + w.pick("deadline-after", 1000, 1, 3 * w.lease_ms)  # the done job's
    e_at = max(d_at + w.lease_ms, deadline) + w.pick("e-after", 2000, 0, 3 * w.lease_ms)
    with lab.setup():
        done_job = lab.enqueue(qty=5, deadline=deadline)
        spent_job = lab.enqueue(qty=6, max_attempts=1)
        held_job = lab.enqueue(qty=7)
        a, _ = claims(lab, "A", now=w.t0, job=done_job, token=1, attempt=1)
        finishes(lab, a, now=finished_at, accepted=True)
        lab.set_row(held_job, status="quarantined")
        lab.note("timeline.note.selection.quarantined-by-hand", job=held_job)
        claims(lab, "B", now=b_at, job=spent_job, token=1, attempt=1)
    rows = snapshot(lab, done_job, spent_job, held_job)
    rows[spent_job] = expected_row(rows[spent_job], status="quarantined")
    got = lab.claim(w.name("C"), now=c_at, lease_ms=w.lease_ms)
    # the story is the job it took, when it took one of those no claim may take (not job 2's
    # quarantine, which may well have happened); else what the claim had to do at c_at
    taken = got.id if isinstance(got, Claim) and got.id in (done_job, held_job) else None
    told = (dict(detail="selection.claimed-done-job", taken=taken, finished_at=finished_at)
            if taken == done_job else
            dict(detail="selection.claimed-quarantined-job", taken=taken) if taken == held_job else
            dict(detail="selection.only-spent-job-changes", which=spent_job))
    lab.expect(got, None, job=taken or done_job, row=rows[taken or done_job], at=c_at, **told)
    expect_rows(lab, {job: row for job, row in rows.items() if job != (taken or done_job)},
                at=c_at, **told)
    fresh = lab.enqueue(qty=8)
    lab.note("timeline.note.selection.past-leases", job=done_job, now=d_at)
    claims(lab, "D", now=d_at, job=fresh, token=1, attempt=1, detail="selection.took-finished-job")
    expect_rows(lab, rows, detail="selection.touched-finished-job")
    lab.note("timeline.note.selection.past-deadline", job=done_job, now=e_at)
    claims(lab, "E", now=e_at, job=fresh, token=2, attempt=2, detail="selection.took-finished-job")
    expect_rows(lab, rows, detail="selection.touched-finished-job")


@check("empty-queue-returns-none", points=1)
def test_empty_queue_returns_none(lab):
    """With no job, and then with only a held job and a done one, claim returns None and
    leaves no transaction open."""
    w = lab.world
    lab.expect(lab.claim(w.name("A"), now=w.t0, lease_ms=w.lease_ms), None)
    lab.expect(lab.conn.in_transaction, False,
               detail="selection.none-left-transaction-open")
    with lab.setup():
        held = lab.enqueue(qty=5)
        claims(lab, "A", now=w.t0, job=held, token=1, attempt=1)
        finished = lab.enqueue(qty=6)
        b, _ = claims(lab, "B", now=w.t0, job=finished, token=1, attempt=1)
        finishes(lab, b, now=w.t0 + w.pick("b-finishes-after", 10, 0, w.lease_ms - 1),
                 accepted=True)
    claims_nothing(lab, "C", now=w.t0 + w.pick("c-after", 500, 0, w.lease_ms - 1),
                   rows=snapshot(lab, held, finished))
    lab.expect(lab.conn.in_transaction, False, detail="selection.none-left-transaction-open")
