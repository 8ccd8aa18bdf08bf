"""`with conn:` closes the transaction: BEGIN IMMEDIATE is written by hand, then the connection's
context manager commits on success and rolls back on error (Python 3.11's sqlite3: commit() and
rollback() act whenever a transaction is open, whatever isolation_level). finish also runs in a
`with conn:` block around BEGIN IMMEDIATE and checks the stamp in one conditional UPDATE."""

from __future__ import annotations

import sqlite3
from typing import Callable

from lab.store import Claim

FREE = "(status = 'pending' OR (status = 'leased' AND lease_until <= :now))"


def claim(conn: sqlite3.Connection, owner: str, now: int, lease_ms: int) -> Claim | None:
    conn.execute("BEGIN IMMEDIATE")
    with conn:
        conn.execute(f"UPDATE jobs SET status = 'quarantined' WHERE {FREE}"
                     " AND (attempts >= max_attempts OR deadline <= :now)", {"now": now})
        picked = conn.execute(f"SELECT id FROM jobs WHERE {FREE} AND attempts < max_attempts"
                              " AND deadline > :now ORDER BY id LIMIT 1", {"now": now}).fetchone()
        if picked is None:
            return None
        stamp = conn.execute(
            "UPDATE jobs SET status = 'leased', owner = :owner, token = token + 1,"
            " attempts = attempts + 1, lease_until = MIN(:now + :ms, deadline)"
            " WHERE id = :id RETURNING id, qty, owner, token, attempts, lease_until",
            {"owner": owner, "now": now, "ms": lease_ms, "id": picked[0]}).fetchone()
    return Claim(*stamp)


def finish(conn: sqlite3.Connection, claim: Claim, now: int) -> bool:
    conn.execute("BEGIN IMMEDIATE")
    with conn:
        cur = conn.execute(
            "UPDATE jobs SET status = 'done', finished_at = :now"
            " WHERE id = :id AND status = 'leased' AND owner = :owner AND token = :token"
            " AND attempts = :attempt AND lease_until = :lease_until"
            " AND :now < lease_until AND :now < deadline",
            {"now": now, "id": claim.id, "owner": claim.owner, "token": claim.token,
             "attempt": claim.attempt, "lease_until": claim.lease_until})
        changed = cur.rowcount == 1
    return changed


def work_once(conn: sqlite3.Connection, owner: str, send: Callable[[Claim], object],
              clock: Callable[[], int], lease_ms: int) -> bool | None:
    c = claim(conn, owner, clock(), lease_ms)
    if c is None:
        return None
    send(c)
    return finish(conn, c, clock())
