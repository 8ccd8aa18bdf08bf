"""claim makes one pass over the live rows in id order, iterating the SELECT's cursor while it
writes: each row without a valid lease is quarantined (UPDATE by id) when spent, and the first
claimable one is leased (UPDATE by id); the pass goes on to the end, so every spent job is
quarantined, whatever comes after the one taken. Each UPDATE touches only the row the cursor is
on, which it has already read. The contract's order (quarantine, then select the lowest id) is
kept in what the rows end as: spent and claimable jobs are disjoint, and the job taken ends with
a valid lease."""

from __future__ import annotations

import sqlite3
from typing import Callable

from lab.store import Claim
from solutions.queue import finish


def claim(conn: sqlite3.Connection, owner: str, now: int, lease_ms: int) -> Claim | None:
    conn.execute("BEGIN IMMEDIATE")
    try:
        taken = None
        rows = conn.execute(
            "SELECT id, qty, status, lease_until, token, attempts, max_attempts, deadline"
            " FROM jobs WHERE status IN ('pending', 'leased') ORDER BY id")
        for job_id, qty, status, lease_until, token, attempts, max_attempts, deadline in rows:
            if status == "leased" and now < lease_until:
                continue  # a valid lease: never touched
            if attempts >= max_attempts or deadline <= now:
                conn.execute("UPDATE jobs SET status = 'quarantined' WHERE id = ?", (job_id,))
            elif taken is None:
                taken = Claim(job_id, qty, owner, token + 1, attempts + 1,
                              min(now + lease_ms, deadline))
                conn.execute("UPDATE jobs SET status = 'leased', owner = ?, token = ?,"
                             " attempts = ?, lease_until = ? WHERE id = ?",
                             (owner, taken.token, taken.attempt, taken.lease_until, job_id))
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return taken


def work_once(conn: sqlite3.Connection, owner: str, send: Callable[[Claim], object],
              clock: Callable[[], int], lease_ms: int) -> bool | None:
    c = claim(conn, owner, clock(), lease_ms)
    if c is None:
        return None
    send(c)
    return finish(conn, c, clock())
