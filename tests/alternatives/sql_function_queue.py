"""A correct implementation that registers Python SQL functions on the connection it is given
(`conn.create_function`, a documented sqlite3 method) and uses them in its SQL: a deterministic
`lease_valid(status, lease_until, now)` in the WHERE clauses of claim and finish, and
`lease_end(now, lease_ms, deadline)` computing `min(now + lease_ms, deadline)` in claim's UPDATE.
An aggregate counts the jobs claim quarantined (unused by the contract, but it runs).

The functions only compute: the decisions are the contract's, written in Python and called by
SQLite row by row inside the one BEGIN IMMEDIATE transaction.
"""

from __future__ import annotations

import sqlite3
from typing import Callable

from lab.store import Claim


def _lease_valid(status, lease_until, now) -> int:
    return int(status == "leased" and lease_until is not None and now < lease_until)


def _lease_end(now, lease_ms, deadline) -> int:
    return min(now + lease_ms, deadline)


class _Count:
    def __init__(self):
        self.n = 0

    def step(self, value):
        self.n += 1

    def finalize(self):
        return self.n


def _register(conn) -> None:
    conn.create_function("lease_valid", 3, _lease_valid, deterministic=True)
    conn.create_function("lease_end", 3, _lease_end)
    conn.create_aggregate("how_many", 1, _Count)


def claim(conn: sqlite3.Connection, owner: str, now: int, lease_ms: int) -> Claim | None:
    _register(conn)
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute(
            "UPDATE jobs SET status = 'quarantined'"
            " WHERE status IN ('pending', 'leased') AND NOT lease_valid(status, lease_until, ?)"
            " AND (attempts >= max_attempts OR deadline <= ?)", (now, now))
        conn.execute("SELECT how_many(id) FROM jobs WHERE status = 'quarantined'").fetchall()
        row = conn.execute(
            "SELECT id FROM jobs WHERE status IN ('pending', 'leased')"
            " AND NOT lease_valid(status, lease_until, ?)"
            " AND attempts < max_attempts AND deadline > ? ORDER BY id LIMIT 1",
            (now, now)).fetchone()
        if row is None:
            conn.execute("COMMIT")
            return None
        stamp = conn.execute(
            "UPDATE jobs SET status = 'leased', owner = ?, token = token + 1,"
            " attempts = attempts + 1, lease_until = lease_end(?, ?, deadline)"
            " WHERE id = ? RETURNING id, qty, owner, token, attempts, lease_until",
            (owner, now, lease_ms, row[0])).fetchone()
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return Claim(*stamp)


def finish(conn: sqlite3.Connection, claim: Claim, now: int) -> bool:
    _register(conn)
    cur = conn.execute(
        "UPDATE jobs SET status = 'done', finished_at = ?"
        " WHERE id = ? AND lease_valid(status, lease_until, ?) AND owner = ? AND token = ?"
        " AND attempts = ? AND lease_until = ? AND ? < deadline",
        (now, claim.id, now, claim.owner, claim.token, claim.attempt, claim.lease_until, now))
    return cur.rowcount == 1


def work_once(conn: sqlite3.Connection, owner: str, send: Callable[[Claim], object],
              clock: Callable[[], int], lease_ms: int) -> bool | None:
    c = claim(conn, owner, clock(), lease_ms)
    if c is None:
        return None
    send(c)
    return finish(conn, c, clock())
