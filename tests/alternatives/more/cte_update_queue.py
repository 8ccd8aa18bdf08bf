"""CTEs: the quarantine is `WITH spent AS (...) UPDATE ... WHERE id IN spent`, the lease is
`WITH pick AS (... ORDER BY id LIMIT 1) UPDATE ... WHERE id = (SELECT id FROM pick) RETURNING`:
two statements, no separate SELECT. finish uses `changes()` read back with SELECT instead of
rowcount."""

from __future__ import annotations

import sqlite3
from typing import Callable

from lab.store import Claim

QUARANTINE = """
WITH spent AS (
    SELECT id FROM jobs
    WHERE (status = 'pending' OR (status = 'leased' AND lease_until <= :now))
      AND (attempts >= max_attempts OR deadline <= :now)
)
UPDATE jobs SET status = 'quarantined' WHERE id IN spent
"""

LEASE = """
WITH pick AS (
    SELECT id FROM jobs
    WHERE (status = 'pending' OR (status = 'leased' AND lease_until <= :now))
      AND attempts < max_attempts AND deadline > :now
    ORDER BY id LIMIT 1
)
UPDATE jobs
   SET status = 'leased', owner = :owner, token = token + 1, attempts = attempts + 1,
       lease_until = MIN(:now + :lease_ms, deadline)
 WHERE id = (SELECT id FROM pick)
RETURNING id, qty, owner, token, attempts, lease_until
"""


def claim(conn: sqlite3.Connection, owner: str, now: int, lease_ms: int) -> Claim | None:
    params = {"now": now, "owner": owner, "lease_ms": lease_ms}
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute(QUARANTINE, {"now": now})
        rows = conn.execute(LEASE, params).fetchall()
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return Claim(*rows[0]) if rows else None


def finish(conn: sqlite3.Connection, claim: Claim, now: int) -> bool:
    conn.execute(
        "UPDATE jobs SET status = 'done', finished_at = :now"
        " WHERE id = :id AND status = 'leased' AND owner = :owner AND token = :token"
        " AND attempts = :attempt AND lease_until = :lease_until"
        " AND :now < lease_until AND :now < deadline",
        {"now": now, "id": claim.id, "owner": claim.owner, "token": claim.token,
         "attempt": claim.attempt, "lease_until": claim.lease_until})
    (changed,) = conn.execute("SELECT changes()").fetchone()
    return changed == 1


def work_once(conn: sqlite3.Connection, owner: str, send: Callable[[Claim], object],
              clock: Callable[[], int], lease_ms: int) -> bool | None:
    c = claim(conn, owner, clock(), lease_ms)
    if c is None:
        return None
    send(c)
    return finish(conn, c, clock())
