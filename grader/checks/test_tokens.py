"""The claim token tells which generation of the lease a holder has: a worker that comes back
late, even under the same name, must never overwrite the record of the lease's new generation."""

from __future__ import annotations

from grader.checkdef import check
from .situations import LEASE_MS, a_holds_the_job
from .steps import claims, claims_nothing, finishes
from grader.harness.scenario import expected_row


@check("lesson-timeline", points=4)
def test_lesson_timeline(lab):
    """The lesson's story: A claims at 0 ms, B re-claims at 1000 ms, A's late finish at 1001 ms
    is rejected and B's row untouched; B's own finish then lands."""
    job, a, _ = a_holds_the_job(lab)
    with lab.setup():
        b, _ = claims(lab, "B", now=LEASE_MS, job=job, token=2, attempt=2)
    lab.note("timeline.note.tokens.late-return", owner="A", token=a.token)
    finishes(lab, a, now=LEASE_MS + 1, accepted=False, detail="tokens.late-finish-accepted",
             token=a.token)
    finishes(lab, b, now=LEASE_MS + 1, accepted=True, detail="tokens.holder-finish-rejected",
             owner="B", token=b.token)


@check("same-name-restart", points=4)
def test_same_name_restart(lab):
    """A's lease runs out; A, restarted under the same name, claims its job again (token=2).
    The stamp of A's earlier run (token=1) is rejected; the new run's stamp is accepted."""
    job, old, _ = a_holds_the_job(lab)
    lab.note("timeline.note.tokens.restart", owner="A")
    with lab.setup():
        new, _ = claims(lab, "A", now=LEASE_MS, job=job, token=2, attempt=2)
    lab.note("timeline.note.tokens.old-run-returns", owner="A", token=old.token)
    finishes(lab, old, now=LEASE_MS + 1, accepted=False,
             detail="tokens.same-name-old-stamp-accepted", token=old.token)
    finishes(lab, new, now=LEASE_MS + 1, accepted=True, detail="tokens.holder-finish-rejected",
             owner="A", token=new.token)


@check("valid-lease-never-handed-over", points=2)
def test_valid_lease_never_handed_over(lab):
    """While A's lease is valid, nobody (not B, not C, not A asking again) gets the job and the
    row never changes; A's finish still lands."""
    job, a, row = a_holds_the_job(lab)
    for now in (0, 1, LEASE_MS // 2, LEASE_MS - 1):
        for owner in ("B", "C", "A"):
            claims_nothing(lab, owner, now, {job: row}, detail="tokens.valid-lease-handed-over",
                           asker=owner, at=now, lease_until=a.lease_until)
    finishes(lab, a, now=LEASE_MS - 1, accepted=True, detail="tokens.holder-finish-rejected",
             owner="A", token=a.token)


@check("requeue-token-increases", points=2)
def test_requeue_token_increases(lab):
    """A job with max_attempts=1 is claimed, expires, is quarantined by the next claim and
    requeued by the operator: the next claim gets token=2 and attempt=1."""
    job, a, row = a_holds_the_job(lab, max_attempts=1)
    with lab.setup():
        claims_nothing(lab, "B", now=LEASE_MS, rows={job: expected_row(row, status="quarantined")},
                       detail="tokens.not-quarantined-for-requeue")
        lab.requeue(job)
    lab.note("timeline.note.tokens.requeued", job=job, token=a.token)
    claims(lab, "C", now=LEASE_MS, job=job, token=2, attempt=1,
           detail="tokens.token-after-requeue", old_token=a.token)
