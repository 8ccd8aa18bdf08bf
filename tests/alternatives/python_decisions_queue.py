"""A correct implementation that decides everything in Python: inside BEGIN IMMEDIATE, claim reads
the whole table with one `SELECT *`, picks the jobs to quarantine and the job to lease in Python,
then writes each decision with an UPDATE by id.

The rules are the contract's, written as Python conditions over the rows it read; the write lock
taken by BEGIN IMMEDIATE keeps the rows it read current until COMMIT.
"""

from __future__ import annotations

import sqlite3
from typing import Callable

from lab.store import Claim


def _lease_not_valid(job: dict, now: int) -> bool:
    return job["status"] == "pending" or (job["status"] == "leased" and job["lease_until"] <= now)


def _spent(job: dict, now: int) -> bool:
    return job["attempts"] >= job["max_attempts"] or job["deadline"] <= now


def claim(conn: sqlite3.Connection, owner: str, now: int, lease_ms: int) -> Claim | None:
    conn.execute("BEGIN IMMEDIATE")
    try:
        cur = conn.execute("SELECT * FROM jobs")
        names = [d[0] for d in cur.description]
        jobs = [dict(zip(names, values)) for values in cur.fetchall()]
        free = [job for job in jobs if _lease_not_valid(job, now)]
        for job in free:
            if _spent(job, now):
                conn.execute("UPDATE jobs SET status = 'quarantined' WHERE id = ?", (job["id"],))
        claimable = sorted((job for job in free if not _spent(job, now)), key=lambda j: j["id"])
        stamp = None
        if claimable:
            job = claimable[0]
            stamp = Claim(id=job["id"], qty=job["qty"], owner=owner, token=job["token"] + 1,
                          attempt=job["attempts"] + 1,
                          lease_until=min(now + lease_ms, job["deadline"]))
            conn.execute("UPDATE jobs SET status = 'leased', owner = ?, token = ?, attempts = ?,"
                         " lease_until = ? WHERE id = ?",
                         (stamp.owner, stamp.token, stamp.attempt, stamp.lease_until, stamp.id))
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return stamp


def finish(conn: sqlite3.Connection, claim: Claim, now: int) -> bool:
    cur = conn.execute(
        "UPDATE jobs SET status = 'done', finished_at = ? WHERE id = ? AND status = 'leased'"
        " AND owner = ? AND token = ? AND attempts = ? AND lease_until = ?"
        " AND ? < lease_until AND ? < deadline",
        (now, claim.id, claim.owner, claim.token, claim.attempt, claim.lease_until, now, now))
    return cur.rowcount == 1


def work_once(conn: sqlite3.Connection, owner: str, send: Callable[[Claim], object],
              clock: Callable[[], int], lease_ms: int) -> bool | None:
    c = claim(conn, owner, clock(), lease_ms)
    if c is None:
        return None
    send(c)
    return finish(conn, c, clock())
