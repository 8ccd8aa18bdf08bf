"""Shared parts for mutants: most mutants change one function and keep the reference's others.

`work_once_with(claim, finish)` builds the reference work_once over the mutant's own claim and
finish, so a bug in claim or finish also shows through work_once, as it would in a student's file;
`restamped(stamp)` the reference work_once that finishes with `stamp(conn, c)`, a stamp it builds
after send returns, instead of the Claim its claim returned.
"""

from __future__ import annotations

from solutions.queue import claim as reference_claim  # noqa: F401  (re-exported for mutants)
from solutions.queue import finish as reference_finish  # noqa: F401


def work_once_with(claim, finish):
    def work_once(conn, owner, send, clock, lease_ms):
        c = claim(conn, owner, clock(), lease_ms)
        if c is None:
            return None
        send(c)
        return finish(conn, c, clock())

    return work_once


def restamped(stamp, claim=reference_claim, finish=reference_finish):
    """The reference work_once, but after send returns it finishes with `stamp(conn, c)` (c: the
    Claim its claim returned): the way a worker "refreshes" its stamp before finishing."""
    def work_once(conn, owner, send, clock, lease_ms):
        c = claim(conn, owner, clock(), lease_ms)
        if c is None:
            return None
        send(c)
        return finish(conn, stamp(conn, c), clock())

    return work_once
