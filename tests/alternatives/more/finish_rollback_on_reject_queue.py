"""finish opens BEGIN IMMEDIATE, reads the row, and on a rejected stamp ends the (unchanged)
transaction with ROLLBACK instead of COMMIT; only an accepted stamp writes and commits. claim
computes the new stamp in Python from the row it read (SELECT *, cursor.description)."""

from __future__ import annotations

import sqlite3
from typing import Callable

from lab.store import Claim

_FREE = "(status = 'pending' OR (status = 'leased' AND lease_until <= :now))"


def _row(cur: sqlite3.Cursor) -> dict | None:
    values = cur.fetchone()
    return None if values is None else dict(zip((d[0] for d in cur.description), values))


def claim(conn: sqlite3.Connection, owner: str, now: int, lease_ms: int) -> Claim | None:
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute(f"UPDATE jobs SET status = 'quarantined' WHERE {_FREE}"
                     " AND (attempts >= max_attempts OR deadline <= :now)", {"now": now})
        job = _row(conn.execute(f"SELECT * FROM jobs WHERE {_FREE} AND attempts < max_attempts"
                                " AND deadline > :now ORDER BY id LIMIT 1", {"now": now}))
        stamp = None
        if job is not None:
            stamp = Claim(id=job["id"], qty=job["qty"], owner=owner, token=job["token"] + 1,
                          attempt=job["attempts"] + 1,
                          lease_until=min(now + lease_ms, job["deadline"]))
            conn.execute("UPDATE jobs SET status = 'leased', owner = ?, token = ?,"
                         " attempts = ?, lease_until = ? WHERE id = ?",
                         (stamp.owner, stamp.token, stamp.attempt, stamp.lease_until, stamp.id))
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return stamp


def finish(conn: sqlite3.Connection, claim: Claim, now: int) -> bool:
    conn.execute("BEGIN IMMEDIATE")
    try:
        row = _row(conn.execute("SELECT * FROM jobs WHERE id = ?", (claim.id,)))
        ok = (row is not None and row["status"] == "leased" and row["owner"] == claim.owner
              and row["token"] == claim.token and row["attempts"] == claim.attempt
              and row["lease_until"] == claim.lease_until
              and now < row["lease_until"] and now < row["deadline"])
        if not ok:
            conn.execute("ROLLBACK")  # nothing was written: undo nothing, release the lock
            return False
        conn.execute("UPDATE jobs SET status = 'done', finished_at = ? WHERE id = ?",
                     (now, claim.id))
        conn.execute("COMMIT")
        return True
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def work_once(conn: sqlite3.Connection, owner: str, send: Callable[[Claim], object],
              clock: Callable[[], int], lease_ms: int) -> bool | None:
    c = claim(conn, owner, clock(), lease_ms)
    if c is None:
        return None
    send(c)
    return finish(conn, c, clock())
