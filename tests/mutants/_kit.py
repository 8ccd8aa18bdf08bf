"""Shared parts for mutants: most mutants change one function and keep the reference's others.

`work_once_with(claim, finish)` builds the reference work_once over the mutant's own claim and
finish, so a bug in claim or finish also shows through work_once, as it would in a student's file;
`restamped(stamp)` the reference work_once that finishes with `stamp(conn, c)`, a stamp it builds
after send returns, instead of the Claim its claim returned; `finished_by(sql)` one that, after
send, runs an UPDATE of its own instead of finish.
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


def finished_by(sql, claim=reference_claim):
    """The reference work_once, but after send it marks the job done with `sql`, an UPDATE of its
    own (named parameters: now, read after send, and the fields of the Claim its claim returned:
    id, owner, token, attempt, lease_until), and returns whether it changed a row."""
    def work_once(conn, owner, send, clock, lease_ms):
        c = claim(conn, owner, clock(), lease_ms)
        if c is None:
            return None
        send(c)
        cur = conn.execute(sql, {"now": clock(), "id": c.id, "owner": c.owner, "token": c.token,
                                 "attempt": c.attempt, "lease_until": c.lease_until})
        return cur.rowcount == 1

    return work_once
