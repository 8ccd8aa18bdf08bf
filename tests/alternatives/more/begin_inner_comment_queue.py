"""A correct implementation whose BEGIN IMMEDIATE has a line comment between its words.

`BEGIN  -- IMMEDIATE: take the write lock now ...` newline `IMMEDIATE`: SQLite's tokenizer reads a
comment as whitespace wherever it stands, so this is BEGIN IMMEDIATE and takes the write lock
before the first read; otherwise the reference: correct. The grader used to read only the
comments a statement opens with and took it for a deferred BEGIN
(claim-in-one-immediate-transaction, -3).
"""

from __future__ import annotations

import sqlite3
from typing import Callable

from lab.store import Claim
from solutions.queue import finish

_FREE = "(status = 'pending' OR (status = 'leased' AND lease_until <= :now))"

BEGIN = """BEGIN  -- IMMEDIATE: take the write lock now, before the first read
    IMMEDIATE"""


def claim(conn: sqlite3.Connection, owner: str, now: int, lease_ms: int) -> Claim | None:
    conn.execute(BEGIN)
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
    return None if stamp is None else Claim(*stamp)


def work_once(conn: sqlite3.Connection, owner: str, send: Callable[[Claim], object],
              clock: Callable[[], int], lease_ms: int) -> bool | None:
    c = claim(conn, owner, clock(), lease_ms)
    if c is None:
        return None
    send(c)
    return finish(conn, c, clock())
