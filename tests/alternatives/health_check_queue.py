"""A correct implementation whose claim runs statements that read no table around its transaction.

claim pings the connection with `SELECT 1` before its BEGIN IMMEDIATE (fail fast on a closed or
broken connection, before taking the write lock) and reads `SELECT total_changes()` after its
COMMIT, for a debug log. Neither reads a table (the contract: "Other statements (PRAGMA,
SELECT 1) may run anywhere"); the transaction itself is the reference's, so it is correct. The
race explorer used to count such statements as reading the database: they conflicted with the
other claim's COMMIT and the race had more than 12 schedules (race-one-winner, 0/7); what SQLite's
authorizer says of them (no table) now makes them conflict with nothing.
"""

from __future__ import annotations

import logging
import sqlite3
from typing import Callable

from lab.store import Claim

log = logging.getLogger(__name__)

_FREE = "(status = 'pending' OR (status = 'leased' AND lease_until <= :now))"


def claim(conn: sqlite3.Connection, owner: str, now: int, lease_ms: int) -> Claim | None:
    conn.execute("SELECT 1").fetchone()  # ping
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute(f"UPDATE jobs SET status = 'quarantined' WHERE {_FREE}"
                     " AND (attempts >= max_attempts OR deadline <= :now)", {"now": now})
        row = conn.execute(f"SELECT id FROM jobs WHERE {_FREE} AND attempts < max_attempts"
                           " AND deadline > :now ORDER BY id LIMIT 1", {"now": now}).fetchone()
        stamp = None
        if row is not None:
            stamp = conn.execute(
                "UPDATE jobs SET status = 'leased', owner = :owner, token = token + 1,"
                " attempts = attempts + 1, lease_until = MIN(:now + :ms, deadline)"
                " WHERE id = :id RETURNING id, qty, owner, token, attempts, lease_until",
                {"owner": owner, "now": now, "ms": lease_ms, "id": row[0]}).fetchone()
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    (total,) = conn.execute("SELECT total_changes()").fetchone()
    log.debug("claim by %s at %s: %s, %s changes on this connection so far",
              owner, now, stamp, total)
    return None if stamp is None else Claim(*stamp)


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
