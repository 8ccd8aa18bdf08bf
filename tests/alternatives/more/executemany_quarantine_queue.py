"""The quarantine is found with a SELECT (iterating the cursor to its end) and written with
executemany, one UPDATE by id per spent job; the job to take is found by a second SELECT, its new
stamp built with dataclasses.replace from a Claim of the row as it was, and written by an UPDATE
guarded by the old token (WHERE id = ? AND token = ?)."""

from __future__ import annotations

import dataclasses
import sqlite3
from typing import Callable

from lab.store import Claim

_FREE = "(status = 'pending' OR (status = 'leased' AND lease_until <= :now))"


def claim(conn: sqlite3.Connection, owner: str, now: int, lease_ms: int) -> Claim | None:
    conn.execute("BEGIN IMMEDIATE")
    try:
        spent = [(job_id,) for (job_id,) in conn.execute(
            f"SELECT id FROM jobs WHERE {_FREE}"
            " AND (attempts >= max_attempts OR deadline <= :now)", {"now": now})]
        if spent:
            conn.executemany("UPDATE jobs SET status = 'quarantined' WHERE id = ?", spent)
        found = conn.execute(
            f"SELECT id, qty, owner, token, attempts, lease_until, deadline FROM jobs"
            f" WHERE {_FREE} AND attempts < max_attempts AND deadline > :now"
            " ORDER BY id LIMIT 1", {"now": now}).fetchone()
        new = None
        if found is not None:
            *fields, deadline = found
            old = Claim(*fields)  # the row as it is now (owner/lease_until may be None)
            new = dataclasses.replace(old, owner=owner, token=old.token + 1,
                                      attempt=old.attempt + 1,
                                      lease_until=min(now + lease_ms, deadline))
            cur = conn.execute(
                "UPDATE jobs SET status = 'leased', owner = :owner, token = :token,"
                " attempts = :attempt, lease_until = :lease_until"
                " WHERE id = :id AND token = :old_token",
                {**dataclasses.asdict(new), "old_token": old.token})
            assert cur.rowcount == 1, "the write lock keeps the row as it was read"
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return new


def finish(conn: sqlite3.Connection, claim: Claim, now: int) -> bool:
    params = dataclasses.asdict(claim) | {"now": now}
    cur = conn.execute(
        "UPDATE jobs SET status = 'done', finished_at = :now"
        " WHERE id = :id AND status = 'leased' AND owner = :owner AND token = :token"
        " AND attempts = :attempt AND lease_until = :lease_until"
        " AND :now < lease_until AND :now < deadline", params)
    return cur.rowcount == 1


def work_once(conn: sqlite3.Connection, owner: str, send: Callable[[Claim], object],
              clock: Callable[[], int], lease_ms: int) -> bool | None:
    c = claim(conn, owner, clock(), lease_ms)
    if c is None:
        return None
    send(c)
    return finish(conn, c, clock())
