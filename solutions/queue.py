"""Reference implementation of the lease queue (read it after you have tried the lab).

Three ideas carry it:
- claim selects and updates inside one short BEGIN IMMEDIATE transaction, so two workers can
  never both read the same pending row as free;
- every claim raises the row's token, and finish matches the whole stamp, so a worker that comes
  back late (or restarted under the same name) cannot overwrite the new holder's record;
- the lease is valid only while now < lease_until; a claim may take a job once lease_until <= now.
"""

from __future__ import annotations

import sqlite3
from typing import Callable

from lab.store import Claim

# A job whose lease is not valid at :now (never claimed, or its lease has run out).
_LEASE_NOT_VALID = "(status = 'pending' OR (status = 'leased' AND lease_until <= :now))"


def claim(conn: sqlite3.Connection, owner: str, now: int, lease_ms: int) -> Claim | None:
    conn.execute("BEGIN IMMEDIATE")
    try:
        # 1. Jobs out of attempts or past their deadline leave the queue before any new token.
        conn.execute(
            f"UPDATE jobs SET status = 'quarantined' WHERE {_LEASE_NOT_VALID}"
            " AND (attempts >= max_attempts OR deadline <= :now)",
            {"now": now},
        )
        # 2. The claimable job with the lowest id.
        row = conn.execute(
            f"SELECT id FROM jobs WHERE {_LEASE_NOT_VALID}"
            " AND attempts < max_attempts AND deadline > :now ORDER BY id LIMIT 1",
            {"now": now},
        ).fetchone()
        if row is None:
            conn.execute("COMMIT")
            return None
        # 3. A new generation of the lease: new token, one more attempt, clamped to the deadline.
        stamp = conn.execute(
            "UPDATE jobs SET status = 'leased', owner = :owner, token = token + 1,"
            " attempts = attempts + 1, lease_until = MIN(:now + :lease_ms, deadline)"
            " WHERE id = :id RETURNING id, qty, owner, token, attempts, lease_until",
            {"owner": owner, "now": now, "lease_ms": lease_ms, "id": row[0]},
        ).fetchone()
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return Claim(*stamp)


def finish(conn: sqlite3.Connection, claim: Claim, now: int) -> bool:
    # One conditional UPDATE is atomic on its own: it changes the row only if the stamp still
    # matches in every field and both the lease and the job's deadline remain.
    cur = conn.execute(
        "UPDATE jobs SET status = 'done', finished_at = :now"
        " WHERE id = :id AND status = 'leased' AND owner = :owner AND token = :token"
        " AND attempts = :attempt AND lease_until = :lease_until"
        " AND :now < lease_until AND :now < deadline",
        {
            "now": now, "id": claim.id, "owner": claim.owner, "token": claim.token,
            "attempt": claim.attempt, "lease_until": claim.lease_until,
        },
    )
    return cur.rowcount == 1


def work_once(
    conn: sqlite3.Connection,
    owner: str,
    send: Callable[[Claim], object],
    clock: Callable[[], int],
    lease_ms: int,
) -> bool | None:
    c = claim(conn, owner, clock(), lease_ms)
    if c is None:
        return None
    send(c)  # no transaction is open here: other workers and new intake are not blocked
    return finish(conn, c, clock())  # a fresh reading: the lease may have run out during send
