"""A correct implementation whose claim and finish run harmless statements around their work.

Before BEGIN IMMEDIATE: `SELECT sqlite_version()` and PRAGMA busy_timeout, journal_mode,
user_version and foreign_keys (reads); after COMMIT: `SELECT 1` and `PRAGMA journal_mode`. None
reads a table and the contract lets such statements run anywhere ("Other statements (PRAGMA,
SELECT 1) may run anywhere"), so it is correct. It lost race-one-winner (0/7) when the race
explorer took the table-less SELECTs as reads of the database (too many schedules).
"""

from __future__ import annotations

import sqlite3
from typing import Callable

from lab.store import Claim

_FREE = "(status = 'pending' OR (status = 'leased' AND lease_until <= :now))"


def _environment(conn: sqlite3.Connection) -> dict[str, object]:
    return {
        "sqlite": conn.execute("SELECT sqlite_version()").fetchone()[0],
        "busy_timeout": conn.execute("PRAGMA busy_timeout").fetchone()[0],
        "journal_mode": conn.execute("PRAGMA journal_mode").fetchone()[0],
        "user_version": conn.execute("PRAGMA user_version").fetchone()[0],
        "foreign_keys": conn.execute("PRAGMA foreign_keys").fetchone()[0],
    }


def claim(conn: sqlite3.Connection, owner: str, now: int, lease_ms: int) -> Claim | None:
    env = _environment(conn)
    if env["journal_mode"] == "wal":
        raise RuntimeError("rollback journal expected")
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
    assert conn.execute("SELECT 1").fetchone() == (1,)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == env["journal_mode"]
    return None if stamp is None else Claim(*stamp)


def finish(conn: sqlite3.Connection, claim: Claim, now: int) -> bool:
    _environment(conn)
    cur = conn.execute(
        "UPDATE jobs SET status = 'done', finished_at = :now"
        " WHERE id = :id AND status = 'leased' AND owner = :owner AND token = :token"
        " AND attempts = :attempt AND lease_until = :lease_until"
        " AND :now < lease_until AND :now < deadline",
        {"now": now, "id": claim.id, "owner": claim.owner, "token": claim.token,
         "attempt": claim.attempt, "lease_until": claim.lease_until})
    changed = cur.rowcount == 1
    conn.execute("SELECT 1").fetchall()
    return changed


def work_once(conn: sqlite3.Connection, owner: str, send: Callable[[Claim], object],
              clock: Callable[[], int], lease_ms: int) -> bool | None:
    c = claim(conn, owner, clock(), lease_ms)
    if c is None:
        return None
    send(c)
    return finish(conn, c, clock())
