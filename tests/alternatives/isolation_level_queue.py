"""A correct implementation that lets Python's sqlite3 module open its transactions: it sets
`conn.isolation_level = 'IMMEDIATE'` for the length of a call, and restores None (autocommit)
before returning.

With isolation_level set, the module issues `BEGIN IMMEDIATE` by itself before the first
INSERT/UPDATE/DELETE, never before a SELECT. So claim's first statement is a write (the
quarantine UPDATE, which the contract puts first anyway): the transaction, and with it the
write lock, is open before the SELECT reads. `conn.commit()` / `conn.rollback()` end it.
"""

from __future__ import annotations

import sqlite3
from contextlib import contextmanager
from typing import Callable

from lab.store import Claim

_FREE = "(status = 'pending' OR (status = 'leased' AND lease_until <= :now))"


@contextmanager
def _implicit_immediate(conn: sqlite3.Connection):
    """Let the module open BEGIN IMMEDIATE at the first write; commit at the end, roll back on
    error; the connection is back in autocommit (isolation_level None) afterwards."""
    conn.isolation_level = "IMMEDIATE"
    try:
        yield
        conn.commit()
    except BaseException:
        conn.rollback()
        raise
    finally:
        conn.isolation_level = None


def claim(conn: sqlite3.Connection, owner: str, now: int, lease_ms: int) -> Claim | None:
    with _implicit_immediate(conn):
        # A write first: the module opens BEGIN IMMEDIATE right before it.
        conn.execute(f"UPDATE jobs SET status = 'quarantined' WHERE {_FREE}"
                     " AND (attempts >= max_attempts OR deadline <= :now)", {"now": now})
        assert conn.in_transaction
        row = conn.execute(f"SELECT id FROM jobs WHERE {_FREE} AND attempts < max_attempts"
                           " AND deadline > :now ORDER BY id LIMIT 1", {"now": now}).fetchone()
        stamp = None
        if row is not None:
            stamp = conn.execute(
                "UPDATE jobs SET status = 'leased', owner = :owner, token = token + 1,"
                " attempts = attempts + 1, lease_until = MIN(:now + :ms, deadline)"
                " WHERE id = :id RETURNING id, qty, owner, token, attempts, lease_until",
                {"owner": owner, "now": now, "ms": lease_ms, "id": row[0]}).fetchone()
    return None if stamp is None else Claim(*stamp)


def finish(conn: sqlite3.Connection, claim: Claim, now: int) -> bool:
    with _implicit_immediate(conn):
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
