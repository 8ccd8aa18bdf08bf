"""claim does all its writes in ONE UPDATE (inside BEGIN IMMEDIATE ... COMMIT): its WHERE takes
every spent job and the job to take, CASE sets each to what the contract gives it (quarantined
rows keep all else; the taken row gets the new stamp), and RETURNING hands back every changed row;
the leased one is the claim. The spent and the claimable jobs are disjoint, so quarantining first
or in the same statement leaves the same rows."""

from __future__ import annotations

import sqlite3
from typing import Callable

from lab.store import Claim

_CLAIM = """
WITH pick(pid) AS (
    SELECT id FROM jobs
     WHERE (status = 'pending' OR (status = 'leased' AND lease_until <= :now))
       AND attempts < max_attempts AND deadline > :now
     ORDER BY id LIMIT 1
)
UPDATE jobs SET
    status      = CASE WHEN id IN pick THEN 'leased' ELSE 'quarantined' END,
    owner       = CASE WHEN id IN pick THEN :owner ELSE owner END,
    token       = CASE WHEN id IN pick THEN token + 1 ELSE token END,
    attempts    = CASE WHEN id IN pick THEN attempts + 1 ELSE attempts END,
    lease_until = CASE WHEN id IN pick THEN MIN(:now + :ms, deadline) ELSE lease_until END
WHERE id IN pick
   OR ((status = 'pending' OR (status = 'leased' AND lease_until <= :now))
       AND (attempts >= max_attempts OR deadline <= :now))
RETURNING status, id, qty, owner, token, attempts, lease_until
"""


def claim(conn: sqlite3.Connection, owner: str, now: int, lease_ms: int) -> Claim | None:
    conn.execute("BEGIN IMMEDIATE")
    try:
        changed = conn.execute(_CLAIM, {"now": now, "owner": owner, "ms": lease_ms}).fetchall()
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    leased = [row[1:] for row in changed if row[0] == "leased"]
    return Claim(*leased[0]) if leased else None


def finish(conn: sqlite3.Connection, claim: Claim, now: int) -> bool:
    cur = conn.execute(
        "UPDATE jobs SET status = 'done', finished_at = :now"
        " WHERE id = :id AND status = 'leased' AND owner = :owner AND token = :token"
        " AND attempts = :attempt AND lease_until = :lease_until"
        " AND :now < lease_until AND :now < deadline",
        {"now": now, "id": claim.id, "owner": claim.owner, "token": claim.token,
         "attempt": claim.attempt, "lease_until": claim.lease_until})
    return cur.rowcount == 1


def work_once(conn: sqlite3.Connection, owner: str, send: Callable[[Claim], object],
              clock: Callable[[], int], lease_ms: int) -> bool | None:
    c = claim(conn, owner, clock(), lease_ms)
    if c is None:
        return None
    send(c)
    return finish(conn, c, clock())
