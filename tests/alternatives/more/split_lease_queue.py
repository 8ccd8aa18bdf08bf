"""The lease is written in three UPDATEs inside claim's one BEGIN IMMEDIATE transaction: the new
generation first (token, attempts), then the holder (status, owner), then the lease_until,
clamped in Python to the deadline read by the SELECT; the Claim is built from a final SELECT of
the row. All of it commits or none of it."""

from __future__ import annotations

import sqlite3
from typing import Callable

from lab.store import Claim
from solutions.queue import finish

_FREE = "(status = 'pending' OR (status = 'leased' AND lease_until <= :now))"


def claim(conn: sqlite3.Connection, owner: str, now: int, lease_ms: int) -> Claim | None:
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute(f"UPDATE jobs SET status = 'quarantined' WHERE {_FREE}"
                     " AND (attempts >= max_attempts OR deadline <= :now)", {"now": now})
        found = conn.execute(f"SELECT id, deadline FROM jobs WHERE {_FREE}"
                             " AND attempts < max_attempts AND deadline > :now"
                             " ORDER BY id LIMIT 1", {"now": now}).fetchone()
        stamp = None
        if found is not None:
            job_id, deadline = found
            conn.execute("UPDATE jobs SET token = token + 1, attempts = attempts + 1"
                         " WHERE id = ?", (job_id,))
            conn.execute("UPDATE jobs SET status = 'leased', owner = ? WHERE id = ?",
                         (owner, job_id))
            conn.execute("UPDATE jobs SET lease_until = ? WHERE id = ?",
                         (min(now + lease_ms, deadline), job_id))
            stamp = Claim(*conn.execute(
                "SELECT id, qty, owner, token, attempts, lease_until FROM jobs WHERE id = ?",
                (job_id,)).fetchone())
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return stamp


def work_once(conn, owner, send, clock, lease_ms):
    c = claim(conn, owner, clock(), lease_ms)
    if c is None:
        return None
    send(c)
    return finish(conn, c, clock())
