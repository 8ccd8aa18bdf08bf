"""work_once runs each of its steps (claim, send, finish) on a worker thread of a
ThreadPoolExecutor and waits for each with .result(): the connection is used from a thread other
than the caller's, while the call runs; clock is read on the caller's thread. claim and finish
are the reference's, written here with qmark parameters."""

from __future__ import annotations

import sqlite3
from concurrent.futures import ThreadPoolExecutor
from typing import Callable

from lab.store import Claim

_FREE = "(status = 'pending' OR (status = 'leased' AND lease_until <= ?))"


def claim(conn: sqlite3.Connection, owner: str, now: int, lease_ms: int) -> Claim | None:
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute(f"UPDATE jobs SET status = 'quarantined' WHERE {_FREE}"
                     " AND (attempts >= max_attempts OR deadline <= ?)", (now, now))
        row = conn.execute(f"SELECT id FROM jobs WHERE {_FREE} AND attempts < max_attempts"
                           " AND deadline > ? ORDER BY id LIMIT 1", (now, now)).fetchone()
        stamp = None
        if row is not None:
            stamp = conn.execute(
                "UPDATE jobs SET status = 'leased', owner = ?, token = token + 1,"
                " attempts = attempts + 1, lease_until = MIN(? + ?, deadline) WHERE id = ?"
                " RETURNING id, qty, owner, token, attempts, lease_until",
                (owner, now, lease_ms, row[0])).fetchone()
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return None if stamp is None else Claim(*stamp)


def finish(conn: sqlite3.Connection, claim: Claim, now: int) -> bool:
    cur = conn.execute(
        "UPDATE jobs SET status = 'done', finished_at = ? WHERE id = ? AND status = 'leased'"
        " AND owner = ? AND token = ? AND attempts = ? AND lease_until = ?"
        " AND ? < lease_until AND ? < deadline",
        (now, claim.id, claim.owner, claim.token, claim.attempt, claim.lease_until, now, now))
    return cur.rowcount == 1


def work_once(conn: sqlite3.Connection, owner: str, send: Callable[[Claim], object],
              clock: Callable[[], int], lease_ms: int) -> bool | None:
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="worker") as pool:
        c = pool.submit(claim, conn, owner, clock(), lease_ms).result()
        if c is None:
            return None
        pool.submit(send, c).result()
        return pool.submit(finish, conn, c, clock()).result()
