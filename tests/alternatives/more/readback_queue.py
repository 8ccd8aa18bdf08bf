"""claim leases with an UPDATE whose WHERE repeats every claimability condition (a guard, as if no
lock were held), checks rowcount, then reads the stored row back with a SELECT to build the Claim:
no RETURNING. Rows are sqlite3.Row for the length of each call, the previous row_factory restored.
finish opens BEGIN IMMEDIATE, asks `SELECT EXISTS(...)` whether the stamp is current, then updates
by id."""

from __future__ import annotations

import sqlite3
from typing import Callable

from lab.store import Claim

_FREE = "(status = 'pending' OR (status = 'leased' AND lease_until <= :now))"
_CLAIMABLE = f"{_FREE} AND attempts < max_attempts AND deadline > :now"


def _tx(conn: sqlite3.Connection, body):
    saved = conn.row_factory
    conn.row_factory = sqlite3.Row
    try:
        conn.execute("BEGIN IMMEDIATE")
        try:
            result = body()
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        return result
    finally:
        conn.row_factory = saved


def claim(conn: sqlite3.Connection, owner: str, now: int, lease_ms: int) -> Claim | None:
    def body() -> Claim | None:
        conn.execute(f"UPDATE jobs SET status = 'quarantined' WHERE {_FREE}"
                     " AND (attempts >= max_attempts OR deadline <= :now)", {"now": now})
        first = conn.execute(f"SELECT id FROM jobs WHERE {_CLAIMABLE} ORDER BY id LIMIT 1",
                             {"now": now}).fetchone()
        if first is None:
            return None
        cur = conn.execute(
            "UPDATE jobs SET status = 'leased', owner = :owner, token = token + 1,"
            " attempts = attempts + 1, lease_until = MIN(:now + :ms, deadline)"
            f" WHERE id = :id AND {_CLAIMABLE}",
            {"owner": owner, "now": now, "ms": lease_ms, "id": first["id"]})
        if cur.rowcount != 1:
            raise RuntimeError("the job stopped being claimable inside the transaction")
        row = conn.execute("SELECT id, qty, owner, token, attempts, lease_until FROM jobs"
                           " WHERE id = ?", (first["id"],)).fetchone()
        return Claim(id=row["id"], qty=row["qty"], owner=row["owner"], token=row["token"],
                     attempt=row["attempts"], lease_until=row["lease_until"])

    return _tx(conn, body)


def finish(conn: sqlite3.Connection, claim: Claim, now: int) -> bool:
    def body() -> bool:
        (current,) = conn.execute(
            "SELECT EXISTS (SELECT 1 FROM jobs WHERE id = :id AND status = 'leased'"
            " AND owner = :owner AND token = :token AND attempts = :attempt"
            " AND lease_until = :lease_until AND :now < lease_until AND :now < deadline)",
            {"now": now, "id": claim.id, "owner": claim.owner, "token": claim.token,
             "attempt": claim.attempt, "lease_until": claim.lease_until}).fetchone()
        if not current:
            return False
        conn.execute("UPDATE jobs SET status = 'done', finished_at = ? WHERE id = ?",
                     (now, claim.id))
        return True

    return _tx(conn, body)


def work_once(conn: sqlite3.Connection, owner: str, send: Callable[[Claim], object],
              clock: Callable[[], int], lease_ms: int) -> bool | None:
    c = claim(conn, owner, clock(), lease_ms)
    if c is None:
        return None
    send(c)
    return finish(conn, c, clock())
