"""A correct implementation whose every SQL constant opens with a comment.

The reference's logic, with each statement documented inside its SQL text: `-- ...` lines, and
`/* ... */` blocks for some. SQLite skips the comments; so must the grader, which reads the
statements through its trace callback (the text it sees starts with the comment). A statement
that opens with a comment is still a statement: it counts for the transaction shape, the race
barrier and the crash points like any other.
"""

from __future__ import annotations

import sqlite3
from typing import Callable

from lab.store import Claim

_NOT_VALID = "(status = 'pending' OR (status = 'leased' AND lease_until <= :now))"

BEGIN = """-- take the write lock before anything is read
BEGIN IMMEDIATE"""
COMMIT = "/* one transaction per claim */ COMMIT"
ROLLBACK = "-- undo everything this claim changed\nROLLBACK"
QUARANTINE = f"""-- spent jobs leave the queue before any new token
/* every one of them, whatever this claim then takes */
UPDATE jobs SET status = 'quarantined' WHERE {_NOT_VALID}
  AND (attempts >= max_attempts OR deadline <= :now)"""
SELECT = f"""-- the claimable job with the lowest id
SELECT id FROM jobs WHERE {_NOT_VALID}
  AND attempts < max_attempts AND deadline > :now ORDER BY id LIMIT 1"""
LEASE = """-- a new generation of the lease: token, attempt, lease clamped to the deadline
UPDATE jobs SET status = 'leased', owner = :owner, token = token + 1,
  attempts = attempts + 1, lease_until = MIN(:now + :lease_ms, deadline)
  WHERE id = :id RETURNING id, qty, owner, token, attempts, lease_until"""
FINISH = """/* one conditional UPDATE: atomic on its own */
-- the whole stamp, and both the lease and the deadline still running
UPDATE jobs SET status = 'done', finished_at = :now
  WHERE id = :id AND status = 'leased' AND owner = :owner AND token = :token
  AND attempts = :attempt AND lease_until = :lease_until
  AND :now < lease_until AND :now < deadline"""


def claim(conn: sqlite3.Connection, owner: str, now: int, lease_ms: int) -> Claim | None:
    conn.execute(BEGIN)
    try:
        conn.execute(QUARANTINE, {"now": now})
        row = conn.execute(SELECT, {"now": now}).fetchone()
        stamp = None
        if row is not None:
            stamp = conn.execute(LEASE, {"owner": owner, "now": now, "lease_ms": lease_ms,
                                         "id": row[0]}).fetchone()
        conn.execute(COMMIT)
    except BaseException:
        if conn.in_transaction:
            conn.execute(ROLLBACK)
        raise
    return None if stamp is None else Claim(*stamp)


def finish(conn: sqlite3.Connection, claim: Claim, now: int) -> bool:
    cur = conn.execute(FINISH, {"now": now, "id": claim.id, "owner": claim.owner,
                                "token": claim.token, "attempt": claim.attempt,
                                "lease_until": claim.lease_until})
    return cur.rowcount == 1


def work_once(conn: sqlite3.Connection, owner: str, send: Callable[[Claim], object],
              clock: Callable[[], int], lease_ms: int) -> bool | None:
    c = claim(conn, owner, clock(), lease_ms)
    if c is None:
        return None
    send(c)
    return finish(conn, c, clock())
