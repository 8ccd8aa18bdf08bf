"""The lease is an upsert: `INSERT INTO jobs ... SELECT <the job to take> ON CONFLICT(id) DO UPDATE`
rewrites the existing row (the INSERT always conflicts, so it never adds one). The quarantine is an
upsert too, over every spent job. finish is `UPDATE ... RETURNING id`: True iff a row came back."""

from __future__ import annotations

import sqlite3
from typing import Callable

from lab.store import Claim

_FREE = "(status = 'pending' OR (status = 'leased' AND lease_until <= :now))"


def claim(conn: sqlite3.Connection, owner: str, now: int, lease_ms: int) -> Claim | None:
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute(
            "INSERT INTO jobs (id, qty, deadline)"
            f" SELECT id, qty, deadline FROM jobs WHERE {_FREE}"
            " AND (attempts >= max_attempts OR deadline <= :now)"
            " ON CONFLICT (id) DO UPDATE SET status = 'quarantined'", {"now": now})
        stamp = conn.execute(
            "INSERT INTO jobs (id, qty, deadline)"
            f" SELECT id, qty, deadline FROM jobs WHERE {_FREE}"
            " AND attempts < max_attempts AND deadline > :now ORDER BY id LIMIT 1"
            " ON CONFLICT (id) DO UPDATE SET status = 'leased', owner = :owner,"
            " token = token + 1, attempts = attempts + 1,"
            " lease_until = MIN(:now + :ms, deadline)"
            " RETURNING id, qty, owner, token, attempts, lease_until",
            {"now": now, "owner": owner, "ms": lease_ms}).fetchone()
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return None if stamp is None else Claim(*stamp)


def finish(conn: sqlite3.Connection, claim: Claim, now: int) -> bool:
    rows = conn.execute(
        "UPDATE jobs SET status = 'done', finished_at = :now"
        " WHERE id = :id AND status = 'leased' AND owner = :owner AND token = :token"
        " AND attempts = :attempt AND lease_until = :lease_until"
        " AND :now < lease_until AND :now < deadline RETURNING id",
        {"now": now, "id": claim.id, "owner": claim.owner, "token": claim.token,
         "attempt": claim.attempt, "lease_until": claim.lease_until}).fetchall()
    return len(rows) == 1


def work_once(conn: sqlite3.Connection, owner: str, send: Callable[[Claim], object],
              clock: Callable[[], int], lease_ms: int) -> bool | None:
    c = claim(conn, owner, clock(), lease_ms)
    if c is None:
        return None
    send(c)
    return finish(conn, c, clock())
