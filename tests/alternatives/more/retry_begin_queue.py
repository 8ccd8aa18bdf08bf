"""claim retries BEGIN IMMEDIATE a bounded number of times when the database is busy, then lets
the last "database is locked" out unchanged (never None). Transactions end with the connection's
commit()/rollback() methods rather than COMMIT/ROLLBACK strings."""

from __future__ import annotations

import sqlite3
from typing import Callable

from lab.store import Claim

BEGIN_TRIES = 3

_FREE = "(status = 'pending' OR (status = 'leased' AND lease_until <= :now))"


def _begin_immediate(conn: sqlite3.Connection) -> None:
    for attempt in range(BEGIN_TRIES):
        try:
            conn.execute("BEGIN IMMEDIATE")
            return
        except sqlite3.OperationalError as err:
            if "locked" not in str(err) and "busy" not in str(err):
                raise
            if attempt == BEGIN_TRIES - 1:
                raise


def claim(conn: sqlite3.Connection, owner: str, now: int, lease_ms: int) -> Claim | None:
    _begin_immediate(conn)
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
        conn.commit()
    except BaseException:
        conn.rollback()  # does nothing when no transaction is open
        raise
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
