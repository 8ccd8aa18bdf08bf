"""The lease is valid only while now < lease_until; a new claim may take it once lease_until <= now.
Each rule is checked before, exactly at and after the expiry time."""

from __future__ import annotations

from lab.store import Claim

from grader.checkdef import check
from .situations import a_holds_the_job, done, leased


@check("finish-before-expiry", points=2)
def test_finish_before_expiry(lab):
    """A finishes 1 ms before its lease ends: accepted."""
    job, a, row = a_holds_the_job(lab)
    now = a.lease_until - 1
    lab.expect(lab.finish(a, now=now), True, job=job, row=done(row, now))


@check("finish-at-expiry", points=3)
def test_finish_exactly_at_expiry(lab):
    """A finishes exactly at lease_until: rejected, the row unchanged."""
    job, a, row = a_holds_the_job(lab)
    lab.expect(lab.finish(a, now=a.lease_until), False, job=job, row=row)


@check("finish-after-expiry", points=2)
def test_finish_after_expiry(lab):
    """A finishes 1 ms after its lease ended: rejected, the row unchanged."""
    job, a, row = a_holds_the_job(lab)
    lab.expect(lab.finish(a, now=a.lease_until + 1), False, job=job, row=row)


@check("reclaim-before-expiry", points=2)
def test_reclaim_before_expiry(lab):
    """B asks for work 1 ms before A's lease ends: nothing to claim, A's row untouched."""
    w = lab.world
    job, a, row = a_holds_the_job(lab)
    lab.expect(lab.claim(w.name("B"), now=a.lease_until - 1, lease_ms=w.lease_ms), None,
               job=job, row=row)


@check("reclaim-at-expiry", points=3)
def test_reclaim_exactly_at_expiry(lab):
    """B asks for work exactly at lease_until: B gets the job with token=2."""
    reclaimed_at(lab, lambda a: a.lease_until)


@check("reclaim-after-expiry", points=2)
def test_reclaim_after_expiry(lab):
    """B asks for work 1 ms after A's lease ended: B gets the job with token=2."""
    reclaimed_at(lab, lambda a: a.lease_until + 1)


def reclaimed_at(lab, when) -> None:
    """B asks for work at `when(A's claim)`, once A's lease has ended: B gets the job with
    token=2 and a lease of its own."""
    w = lab.world
    job, a, row = a_holds_the_job(lab)
    now = when(a)
    b = lab.claim(w.name("B"), now=now, lease_ms=w.lease_ms)
    until = now + w.lease_ms
    lab.expect(b, Claim(id=job, qty=a.qty, owner=w.name("B"), token=2, attempt=2,
                        lease_until=until),
               job=job, row=leased(row, w.name("B"), token=2, attempts=2, lease_until=until))
