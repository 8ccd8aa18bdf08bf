"""The lease is valid only while now < lease_until; a new claim may take it once lease_until <= now.
Each rule is checked before, exactly at and after the expiry time."""

from __future__ import annotations

import pytest

from lab.store import Claim

from grader.checkdef import check
from .situations import LEASE_MS, a_holds_the_job, done, leased

@check("finish-before-expiry", points=2)
def test_finish_before_expiry(lab):
    """A finishes 1 ms before its lease ends: accepted."""
    job, a, row = a_holds_the_job(lab)
    lab.expect(lab.finish(a, now=LEASE_MS - 1), True, job=job, row=done(row, LEASE_MS - 1))

@check("finish-at-expiry", points=4)
def test_finish_exactly_at_expiry(lab):
    """A finishes exactly at lease_until: rejected, the row unchanged."""
    job, a, row = a_holds_the_job(lab)
    lab.expect(lab.finish(a, now=LEASE_MS), False, job=job, row=row)

@check("finish-after-expiry", points=2)
def test_finish_after_expiry(lab):
    """A finishes 1 ms after its lease ended: rejected, the row unchanged."""
    job, a, row = a_holds_the_job(lab)
    lab.expect(lab.finish(a, now=LEASE_MS + 1), False, job=job, row=row)

@check("reclaim-before-expiry", points=2)
def test_reclaim_before_expiry(lab):
    """B asks for work 1 ms before A's lease ends: nothing to claim, A's row untouched."""
    job, a, row = a_holds_the_job(lab)
    lab.expect(lab.claim("B", now=LEASE_MS - 1, lease_ms=LEASE_MS), None, job=job, row=row)

@check("reclaim-at-expiry", points=4)
def test_reclaim_exactly_at_expiry(lab):
    """B asks for work exactly at lease_until: B gets the job with token=2."""
    job, a, row = a_holds_the_job(lab)
    b = lab.claim("B", now=LEASE_MS, lease_ms=LEASE_MS)
    lab.expect(b, Claim(id=job, qty=a.qty, owner="B", token=2, attempt=2,
                        lease_until=2 * LEASE_MS),
               job=job, row=leased(row, "B", token=2, attempts=2, lease_until=2 * LEASE_MS))

@check("reclaim-after-expiry", points=2)
def test_reclaim_after_expiry(lab):
    """B asks for work 1 ms after A's lease ended: B gets the job with token=2."""
    job, a, row = a_holds_the_job(lab)
    now = LEASE_MS + 1
    b = lab.claim("B", now=now, lease_ms=LEASE_MS)
    lab.expect(b, Claim(id=job, qty=a.qty, owner="B", token=2, attempt=2,
                        lease_until=now + LEASE_MS),
               job=job, row=leased(row, "B", token=2, attempts=2, lease_until=now + LEASE_MS))
