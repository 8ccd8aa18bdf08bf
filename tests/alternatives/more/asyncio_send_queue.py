"""work_once delivers through asyncio: `asyncio.run` of a coroutine that awaits
`asyncio.to_thread(send, c)`, so send runs on the default executor's thread and its exception
comes back through the await. claim and finish use explicit cursors and named parameters."""

from __future__ import annotations

import asyncio
import sqlite3
from typing import Callable

from lab.store import Claim

_FREE = "(status = 'pending' OR (status = 'leased' AND lease_until <= :now))"


def claim(conn: sqlite3.Connection, owner: str, now: int, lease_ms: int) -> Claim | None:
    cur = conn.cursor()
    cur.execute("BEGIN IMMEDIATE")
    try:
        cur.execute(f"UPDATE jobs SET status = 'quarantined' WHERE {_FREE}"
                    " AND (attempts >= max_attempts OR deadline <= :now)", {"now": now})
        cur.execute(f"SELECT id FROM jobs WHERE {_FREE} AND attempts < max_attempts"
                    " AND deadline > :now ORDER BY id LIMIT 1", {"now": now})
        row = cur.fetchone()
        stamp = None
        if row is not None:
            cur.execute(
                "UPDATE jobs SET status = 'leased', owner = :owner, token = token + 1,"
                " attempts = attempts + 1, lease_until = MIN(:now + :ms, deadline)"
                " WHERE id = :id RETURNING id, qty, owner, token, attempts, lease_until",
                {"owner": owner, "now": now, "ms": lease_ms, "id": row[0]})
            stamp = cur.fetchone()
        cur.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            cur.execute("ROLLBACK")
        raise
    return None if stamp is None else Claim(*stamp)


def finish(conn: sqlite3.Connection, claim: Claim, now: int) -> bool:
    cur = conn.cursor()
    cur.execute(
        "UPDATE jobs SET status = 'done', finished_at = :now"
        " WHERE id = :id AND status = 'leased' AND owner = :owner AND token = :token"
        " AND attempts = :attempt AND lease_until = :lease_until"
        " AND :now < lease_until AND :now < deadline",
        {"now": now, "id": claim.id, "owner": claim.owner, "token": claim.token,
         "attempt": claim.attempt, "lease_until": claim.lease_until})
    return cur.rowcount == 1


async def _deliver(send: Callable[[Claim], object], c: Claim) -> None:
    await asyncio.to_thread(send, c)


def work_once(conn: sqlite3.Connection, owner: str, send: Callable[[Claim], object],
              clock: Callable[[], int], lease_ms: int) -> bool | None:
    c = claim(conn, owner, clock(), lease_ms)
    if c is None:
        return None
    asyncio.run(_deliver(send, c))
    return finish(conn, c, clock())
