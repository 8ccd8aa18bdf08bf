"""UPDATE ... FROM (SQLite 3.33+): the lease joins jobs to a one-row subquery of the job to take;
the quarantine is an UPDATE whose WHERE is `id IN (SELECT ...)`. finish counts with
conn.total_changes before and after its conditional UPDATE."""

from __future__ import annotations

import sqlite3
from typing import Callable

from lab.store import Claim


def claim(conn: sqlite3.Connection, owner: str, now: int, lease_ms: int) -> Claim | None:
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute(
            "UPDATE jobs SET status = 'quarantined' WHERE id IN ("
            "  SELECT id FROM jobs WHERE status = 'pending'"
            "  UNION SELECT id FROM jobs WHERE status = 'leased' AND lease_until <= :t"
            ") AND (attempts >= max_attempts OR deadline <= :t)", {"t": now})
        got = conn.execute(
            "UPDATE jobs SET status = 'leased', owner = :o, token = jobs.token + 1,"
            " attempts = jobs.attempts + 1, lease_until = MIN(:t + :ms, jobs.deadline)"
            " FROM (SELECT id AS pick FROM jobs"
            "       WHERE (status = 'pending' OR (status = 'leased' AND lease_until <= :t))"
            "         AND attempts < max_attempts AND deadline > :t ORDER BY id LIMIT 1) AS p"
            " WHERE jobs.id = p.pick"
            " RETURNING jobs.id, jobs.qty, jobs.owner, jobs.token, jobs.attempts, jobs.lease_until",
            {"o": owner, "t": now, "ms": lease_ms}).fetchone()
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return None if got is None else Claim(*got)


def finish(conn: sqlite3.Connection, claim: Claim, now: int) -> bool:
    before = conn.total_changes
    conn.execute(
        "UPDATE jobs SET status = 'done', finished_at = :now"
        " WHERE id = :id AND status = 'leased' AND owner = :owner AND token = :token"
        " AND attempts = :attempt AND lease_until = :lease_until"
        " AND :now < lease_until AND :now < deadline",
        {"now": now, "id": claim.id, "owner": claim.owner, "token": claim.token,
         "attempt": claim.attempt, "lease_until": claim.lease_until})
    return conn.total_changes - before == 1


def work_once(conn: sqlite3.Connection, owner: str, send: Callable[[Claim], object],
              clock: Callable[[], int], lease_ms: int) -> bool | None:
    c = claim(conn, owner, clock(), lease_ms)
    if c is None:
        return None
    send(c)
    return finish(conn, c, clock())
