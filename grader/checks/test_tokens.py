"""The claim token tells which generation of the lease a holder has: a worker that comes back
late, even under the same name, must never overwrite the record of the lease's new generation."""

from __future__ import annotations

from grader.checkdef import check
from .situations import a_holds_the_job
from .steps import claims, claims_nothing, finishes
from grader.harness.judge.outcomes import expected_row


@check("lesson-timeline", points=3)
def test_lesson_timeline(lab):
    """The lesson's story: A claims at 0 ms, B re-claims at 1000 ms, A's late finish at 1001 ms
    is rejected and B's row untouched; B's own finish then lands."""
    w = lab.world
    job, a, _ = a_holds_the_job(lab)
    with lab.setup():
        b, _ = claims(lab, "B", now=a.lease_until, job=job, token=2, attempt=2)
    lab.note("timeline.note.tokens.late-return", owner=w.name("A"), token=a.token)
    finishes(lab, a, now=a.lease_until + 1, accepted=False, detail="tokens.late-finish-accepted",
             token=a.token)
    finishes(lab, b, now=a.lease_until + 1, accepted=True, detail="tokens.holder-finish-rejected",
             owner=w.name("B"), token=b.token)


@check("same-name-restart", points=3)
def test_same_name_restart(lab):
    """A's lease runs out; A, restarted under the same name, claims its job again (token=2).
    The stamp of A's earlier run (token=1) is rejected; the new run's stamp is accepted."""
    w = lab.world
    job, old, _ = a_holds_the_job(lab)
    lab.note("timeline.note.tokens.restart", owner=w.name("A"))
    with lab.setup():
        new, _ = claims(lab, "A", now=old.lease_until, job=job, token=2, attempt=2)
    lab.note("timeline.note.tokens.old-run-returns", owner=w.name("A"), token=old.token)
    finishes(lab, old, now=old.lease_until + 1, accepted=False,
             detail="tokens.same-name-old-stamp-accepted", token=old.token)
    finishes(lab, new, now=old.lease_until + 1, accepted=True,
             detail="tokens.holder-finish-rejected", owner=w.name("A"), token=new.token)


@check("valid-lease-never-handed-over", points=2)
def test_valid_lease_never_handed_over(lab):
    """While A's lease is valid, nobody (not B, not C, not A asking again) gets the job and the
    row never changes; A's finish still lands."""
    w = lab.world
    job, a, row = a_holds_the_job(lab)
    for now in (w.t0, w.t0 + 1, w.t0 + w.lease_ms // 2, a.lease_until - 1):
        for role in ("B", "C", "A"):
            claims_nothing(lab, role, now, {job: row}, detail="tokens.valid-lease-handed-over",
                           asker=w.name(role), at=now, lease_until=a.lease_until)
    finishes(lab, a, now=a.lease_until - 1, accepted=True, detail="tokens.holder-finish-rejected",
             owner=w.name("A"), token=a.token)


@check("requeue-token-increases", points=2)
def test_requeue_token_increases(lab):
    """A job with max_attempts=1 is claimed, expires, is quarantined by the next claim and
    requeued by the operator: the next claim gets token=2 and attempt=1."""
    job, a, row = a_holds_the_job(lab, max_attempts=1)
    with lab.setup():
        claims_nothing(lab, "B", now=a.lease_until,
                       rows={job: expected_row(row, status="quarantined")},
                       detail="tokens.not-quarantined-for-requeue")
        lab.requeue(job)
    lab.note("timeline.note.tokens.requeued", job=job, token=a.token)
    claims(lab, "C", now=a.lease_until, job=job, token=2, attempt=1,
           detail="tokens.token-after-requeue", old_token=a.token)
