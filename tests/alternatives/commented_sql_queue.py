"""A correct implementation whose SQL constants open with `-- comments`, as a student documents
each statement where it is written.

The grader reads the statements through SQLite's trace callback, which reports them with their
comments: a `-- comment` line before BEGIN IMMEDIATE, COMMIT or an UPDATE must not hide what the
statement is.
"""

from __future__ import annotations

import sqlite3
from typing import Callable

from lab.store import Claim

BEGIN_SQL = """-- take the write lock before reading anything
BEGIN IMMEDIATE"""

COMMIT_SQL = """-- end of the claim: the new lease becomes visible
COMMIT"""

ROLLBACK_SQL = """-- undo everything this claim changed
ROLLBACK"""

QUARANTINE_SQL = """-- step 1: spent jobs whose lease is not valid leave the queue (no new token)
UPDATE jobs SET status = 'quarantined'
 WHERE (status = 'pending' OR (status = 'leased' AND lease_until <= :now))
   AND (attempts >= max_attempts OR deadline <= :now)"""

SELECT_SQL = """-- step 2: pick the lowest claimable job
/* claimable: lease not valid, attempts left, deadline ahead */
SELECT id FROM jobs
 WHERE (status = 'pending' OR (status = 'leased' AND lease_until <= :now))
   AND attempts < max_attempts AND deadline > :now
 ORDER BY id LIMIT 1"""

CLAIM_SQL = """-- step 3: a new generation of the lease, cut off at the deadline
UPDATE jobs SET status = 'leased', owner = :owner, token = token + 1,
       attempts = attempts + 1, lease_until = MIN(:now + :lease_ms, deadline)
 WHERE id = :id
RETURNING id, qty, owner, token, attempts, lease_until"""

FINISH_SQL = """-- done only if the stamp still matches the row in every field
-- and both the lease and the deadline remain
UPDATE jobs SET status = 'done', finished_at = :now
 WHERE id = :id AND status = 'leased' AND owner = :owner AND token = :token
   AND attempts = :attempt AND lease_until = :lease_until
   AND :now < lease_until AND :now < deadline"""


def claim(conn: sqlite3.Connection, owner: str, now: int, lease_ms: int) -> Claim | None:
    conn.execute(BEGIN_SQL)
    try:
        conn.execute(QUARANTINE_SQL, {"now": now})
        row = conn.execute(SELECT_SQL, {"now": now}).fetchone()
        stamp = None
        if row is not None:
            stamp = conn.execute(CLAIM_SQL, {"owner": owner, "now": now,
                                             "lease_ms": lease_ms, "id": row[0]}).fetchone()
        conn.execute(COMMIT_SQL)
    except BaseException:
        if conn.in_transaction:
            conn.execute(ROLLBACK_SQL)
        raise
    return None if stamp is None else Claim(*stamp)


def finish(conn: sqlite3.Connection, claim: Claim, now: int) -> bool:
    cur = conn.execute(FINISH_SQL, {
        "now": now, "id": claim.id, "owner": claim.owner, "token": claim.token,
        "attempt": claim.attempt, "lease_until": claim.lease_until})
    return cur.rowcount == 1


def work_once(conn: sqlite3.Connection, owner: str, send: Callable[[Claim], object],
              clock: Callable[[], int], lease_ms: int) -> bool | None:
    c = claim(conn, owner, clock(), lease_ms)
    if c is None:
        return None
    send(c)
    return finish(conn, c, clock())
