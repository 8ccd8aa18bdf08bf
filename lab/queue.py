"""The lease queue: your part of the lab.

Fill in `claim`, `finish` and `work_once`, then grade your work with `python -m grader`.
The store (`lab/store.py`) is provided: use `Claim` from it, and open connections with
`lab.store.connect`, which turns off the sqlite3 module's implicit transactions, so you write
BEGIN IMMEDIATE / COMMIT / ROLLBACK yourself. Times are integer milliseconds on a logical clock
passed in by the caller: never read the wall clock here.

Each function works on the connection `conn` it is given, and only on it: do not open another
connection to the queue's database (the grader, the lock and the other workers see only that
one; a call that does fails its check). A scratch database of your own (":memory:", another
file) is fine.
"""

from __future__ import annotations

import sqlite3
from typing import Callable

from lab.store import Claim


def claim(conn: sqlite3.Connection, owner: str, now: int, lease_ms: int) -> Claim | None:
    """Lease the claimable job with the lowest id to `owner`, or return None if there is none.

    Everything below happens inside one short `BEGIN IMMEDIATE` ... `COMMIT` transaction, in order:

    1. Quarantine: every job that is not done/quarantined, whose lease is not valid (pending, or
       leased with `lease_until <= now`), and that has used up its attempts
       (`attempts >= max_attempts`) or is past its deadline (`deadline <= now`), becomes
       'quarantined'. Nothing else in those rows changes: no new token.
    2. Select the claimable job with the lowest id: pending, or leased with `lease_until <= now`;
       with `attempts < max_attempts` and `deadline > now`. None: commit and return None.
    3. Update it: status 'leased', owner=owner, token+1, attempts+1,
       lease_until = min(now + lease_ms, deadline).
    4. Commit, and return `Claim(id, qty, owner, token, attempt=attempts, lease_until)` holding
       the values now stored in the row.

    A job whose lease is still valid (`now < lease_until`) is never touched. If anything fails
    inside the transaction, roll back and re-raise: when claim returns or raises, the connection
    has no open transaction.
    """
    raise NotImplementedError("claim")


def finish(conn: sqlite3.Connection, claim: Claim, now: int) -> bool:
    """Mark the claimed job done (finished_at=now) if, and only if, the stamp is still current.

    The stamp is current when the row is 'leased' and matches `claim` in every field (id, owner,
    token, attempts == claim.attempt, lease_until), and `now < lease_until` and `now < deadline`.
    Do it atomically (one conditional UPDATE is enough). Return True iff the row changed; when
    rejected return False and leave the row exactly as it was. Leave no transaction open.
    """
    raise NotImplementedError("finish")


def work_once(
    conn: sqlite3.Connection,
    owner: str,
    send: Callable[[Claim], object],
    clock: Callable[[], int],
    lease_ms: int,
) -> bool | None:
    """Claim one job, send it, then finish it.

    `c = claim(conn, owner, clock(), lease_ms)`; if there is nothing to claim, return None.
    Otherwise call `send(c)` with no transaction open on `conn` (other connections must be able
    to enqueue and claim meanwhile), then return `finish(conn, c, clock())` with a fresh reading
    of the clock: the lease may have run out while sending. If `send` raises, let the exception
    propagate; the job stays leased and is never marked done.
    """
    raise NotImplementedError("work_once")
