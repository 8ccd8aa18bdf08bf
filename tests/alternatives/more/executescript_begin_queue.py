"""executescript for claim's first steps: one script opens BEGIN IMMEDIATE and runs the
quarantine (now is an int, written into the script with %d since a script takes no parameters);
the selection and the lease follow with execute on the same open transaction. executemany writes
finish's single parameter set."""

from __future__ import annotations

import sqlite3
from typing import Callable

from lab.store import Claim

_SCRIPT = """
BEGIN IMMEDIATE;
UPDATE jobs SET status = 'quarantined'
 WHERE (status = 'pending' OR (status = 'leased' AND lease_until <= %(now)d))
   AND (attempts >= max_attempts OR deadline <= %(now)d);
"""


def claim(conn: sqlite3.Connection, owner: str, now: int, lease_ms: int) -> Claim | None:
    try:
        conn.executescript(_SCRIPT % {"now": int(now)})
        row = conn.execute(
            "SELECT id FROM jobs WHERE (status = 'pending' OR (status = 'leased' AND lease_until <= ?))"
            " AND attempts < max_attempts AND deadline > ? ORDER BY id LIMIT 1",
            (now, now)).fetchone()
        stamp = None
        if row is not None:
            stamp = conn.execute(
                "UPDATE jobs SET status = 'leased', owner = ?, token = token + 1,"
                " attempts = attempts + 1, lease_until = MIN(? + ?, deadline) WHERE id = ?"
                " RETURNING id, qty, owner, token, attempts, lease_until",
                (owner, now, lease_ms, row[0])).fetchone()
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return None if stamp is None else Claim(*stamp)


def finish(conn: sqlite3.Connection, claim: Claim, now: int) -> bool:
    cur = conn.executemany(
        "UPDATE jobs SET status = 'done', finished_at = ?"
        " WHERE id = ? AND status = 'leased' AND owner = ? AND token = ?"
        " AND attempts = ? AND lease_until = ? AND ? < lease_until AND ? < deadline",
        [(now, claim.id, claim.owner, claim.token, claim.attempt, claim.lease_until, now, now)])
    return cur.rowcount == 1


def work_once(conn: sqlite3.Connection, owner: str, send: Callable[[Claim], object],
              clock: Callable[[], int], lease_ms: int) -> bool | None:
    c = claim(conn, owner, clock(), lease_ms)
    if c is None:
        return None
    send(c)
    return finish(conn, c, clock())
