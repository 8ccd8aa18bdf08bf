"""A correct implementation whose claim logs its SQL with its own trace callback, a debugging aid
a student adds to see what runs, and leaves it installed. (A variant that removes it again with
set_trace_callback(None) before returning was graded too: the same score, the same check failed.)

`conn.set_trace_callback` replaces any callback already on the connection (Python offers no way
to read the old one back), so the grader must not depend on its own callback staying in place.
"""

from __future__ import annotations

import sqlite3
from typing import Callable

from lab.store import Claim

#: Every statement claim has run, in order: print it when a claim misbehaves.
SQL_LOG: list[str] = []

_FREE = "(status = 'pending' OR (status = 'leased' AND lease_until <= :now))"


def claim(conn: sqlite3.Connection, owner: str, now: int, lease_ms: int) -> Claim | None:
    conn.set_trace_callback(SQL_LOG.append)
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute(f"UPDATE jobs SET status = 'quarantined' WHERE {_FREE}"
                     " AND (attempts >= max_attempts OR deadline <= :now)", {"now": now})
        row = conn.execute(f"SELECT id FROM jobs WHERE {_FREE} AND attempts < max_attempts"
                           " AND deadline > :now ORDER BY id LIMIT 1", {"now": now}).fetchone()
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
    cur = conn.execute(
        "UPDATE jobs SET status = 'done', finished_at = ? WHERE id = ? AND status = 'leased'"
        " AND owner = ? AND token = ? AND attempts = ? AND lease_until = ?"
        " AND ? < lease_until AND ? < deadline",
        (now, claim.id, claim.owner, claim.token, claim.attempt, claim.lease_until, now, now))
    return cur.rowcount == 1


def work_once(conn: sqlite3.Connection, owner: str, send: Callable[[Claim], object],
              clock: Callable[[], int], lease_ms: int) -> bool | None:
    c = claim(conn, owner, clock(), lease_ms)
    if c is None:
        return None
    send(c)
    return finish(conn, c, clock())
