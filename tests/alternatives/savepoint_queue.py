"""A correct implementation that structures its transactions with SAVEPOINTs inside
BEGIN IMMEDIATE: each step of claim is a savepoint of its own (released when it succeeds, rolled
back to when it fails), and finish checks the stamp inside a savepoint as well.

Only the outer BEGIN IMMEDIATE ... COMMIT is the transaction; the savepoints nest inside it and
take no lock of their own.
"""

from __future__ import annotations

import sqlite3
from contextlib import contextmanager
from typing import Callable

from lab.store import Claim

_FREE = "(status = 'pending' OR (status = 'leased' AND lease_until <= :now))"


@contextmanager
def _write_transaction(conn: sqlite3.Connection):
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


@contextmanager
def _savepoint(conn: sqlite3.Connection, name: str):
    conn.execute(f"SAVEPOINT {name}")
    try:
        yield
    except BaseException:
        conn.execute(f"ROLLBACK TO SAVEPOINT {name}")
        conn.execute(f"RELEASE SAVEPOINT {name}")
        raise
    conn.execute(f"RELEASE SAVEPOINT {name}")


def claim(conn: sqlite3.Connection, owner: str, now: int, lease_ms: int) -> Claim | None:
    stamp = None
    with _write_transaction(conn):
        with _savepoint(conn, "quarantine"):
            conn.execute(f"UPDATE jobs SET status = 'quarantined' WHERE {_FREE}"
                         " AND (attempts >= max_attempts OR deadline <= :now)", {"now": now})
        with _savepoint(conn, "take"):
            row = conn.execute(f"SELECT id FROM jobs WHERE {_FREE} AND attempts < max_attempts"
                               " AND deadline > :now ORDER BY id LIMIT 1",
                               {"now": now}).fetchone()
            if row is not None:
                stamp = conn.execute(
                    "UPDATE jobs SET status = 'leased', owner = :owner, token = token + 1,"
                    " attempts = attempts + 1, lease_until = MIN(:now + :ms, deadline)"
                    " WHERE id = :id RETURNING id, qty, owner, token, attempts, lease_until",
                    {"owner": owner, "now": now, "ms": lease_ms, "id": row[0]}).fetchone()
    return None if stamp is None else Claim(*stamp)


def finish(conn: sqlite3.Connection, claim: Claim, now: int) -> bool:
    with _write_transaction(conn):
        with _savepoint(conn, "finish"):
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
