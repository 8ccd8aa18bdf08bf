"""Explicit cursors: conn.cursor(), cur.execute, fetchall, every cursor closed in finally; qmark
parameters; lease_until computed in Python; no RETURNING (SELECT then UPDATE with a token guard)."""

from __future__ import annotations

import sqlite3
from typing import Callable

from lab.store import Claim


def claim(conn: sqlite3.Connection, owner: str, now: int, lease_ms: int) -> Claim | None:
    cur = conn.cursor()
    try:
        cur.execute("BEGIN IMMEDIATE")
        try:
            cur.execute(
                "UPDATE jobs SET status = 'quarantined'"
                " WHERE (status = 'pending' OR (status = 'leased' AND lease_until <= ?))"
                " AND (attempts >= max_attempts OR deadline <= ?)",
                (now, now),
            )
            cur.execute(
                "SELECT id, qty, token, attempts, deadline FROM jobs"
                " WHERE (status = 'pending' OR (status = 'leased' AND lease_until <= ?))"
                " AND attempts < max_attempts AND deadline > ? ORDER BY id LIMIT 1",
                (now, now),
            )
            rows = cur.fetchall()
            result = None
            if rows:
                job_id, qty, token, attempts, deadline = rows[0]
                lease_until = min(now + lease_ms, deadline)
                cur.execute(
                    "UPDATE jobs SET status = 'leased', owner = ?, token = ?, attempts = ?,"
                    " lease_until = ? WHERE id = ? AND token = ?",
                    (owner, token + 1, attempts + 1, lease_until, job_id, token),
                )
                if cur.rowcount != 1:
                    raise RuntimeError(f"job {job_id} changed under the write lock")
                result = Claim(job_id, qty, owner, token + 1, attempts + 1, lease_until)
            cur.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                cur.execute("ROLLBACK")
            raise
        return result
    finally:
        cur.close()


def finish(conn: sqlite3.Connection, claim: Claim, now: int) -> bool:
    cur = conn.cursor()
    try:
        cur.execute(
            "UPDATE jobs SET status = 'done', finished_at = ?"
            " WHERE id = ? AND status = 'leased' AND owner = ? AND token = ?"
            " AND attempts = ? AND lease_until = ? AND ? < lease_until AND ? < deadline",
            (now, claim.id, claim.owner, claim.token, claim.attempt, claim.lease_until, now, now),
        )
        return cur.rowcount == 1
    finally:
        cur.close()


def work_once(conn: sqlite3.Connection, owner: str, send: Callable[[Claim], object],
              clock: Callable[[], int], lease_ms: int) -> bool | None:
    c = claim(conn, owner, clock(), lease_ms)
    if c is None:
        return None
    send(c)
    return finish(conn, c, clock())
