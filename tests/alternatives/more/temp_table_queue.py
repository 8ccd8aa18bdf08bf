"""claim collects the spent jobs' ids in a TEMP table (created, filled, used and dropped inside
its BEGIN IMMEDIATE transaction), then quarantines `WHERE id IN temp.spent`; the job to take is
chosen with `ORDER BY rowid` (the id's alias) and read through `fetchmany(1)` of a SELECT without
LIMIT, the cursor closed explicitly before the UPDATE. `UPDATE OR ABORT` spells the default
conflict clause out."""

from __future__ import annotations

import sqlite3
from typing import Callable

from lab.store import Claim

_FREE = "(status = 'pending' OR (status = 'leased' AND lease_until <= :now))"


def claim(conn: sqlite3.Connection, owner: str, now: int, lease_ms: int) -> Claim | None:
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute("CREATE TEMP TABLE IF NOT EXISTS spent (id INTEGER PRIMARY KEY)")
        conn.execute("DELETE FROM temp.spent")
        conn.execute(f"INSERT INTO temp.spent (id) SELECT id FROM main.jobs WHERE {_FREE}"
                     " AND (attempts >= max_attempts OR deadline <= :now)", {"now": now})
        conn.execute("UPDATE OR ABORT jobs SET status = 'quarantined'"
                     " WHERE id IN (SELECT id FROM temp.spent)")
        conn.execute("DROP TABLE temp.spent")
        cur = conn.cursor()
        cur.execute(f"SELECT id FROM jobs WHERE {_FREE} AND attempts < max_attempts"
                    " AND deadline > :now ORDER BY rowid", {"now": now})
        first = cur.fetchmany(1)
        cur.close()
        stamp = None
        if first:
            stamp = conn.execute(
                "UPDATE OR ABORT jobs SET status = 'leased', owner = :owner, token = token + 1,"
                " attempts = attempts + 1, lease_until = MIN(:now + :ms, deadline)"
                " WHERE id = :id RETURNING id, qty, owner, token, attempts, lease_until",
                {"owner": owner, "now": now, "ms": lease_ms, "id": first[0][0]}).fetchone()
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
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
