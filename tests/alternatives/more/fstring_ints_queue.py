"""Integers (now, lease_ms) are written into the SQL with f-strings after int() (safe: they are
ints by the contract); the owner, a string, is always a bound parameter. The quarantine is two
UPDATEs (out of attempts; past the deadline), the lease_until is iif(), and finish compares now
against MIN(lease_until, deadline)."""

from __future__ import annotations

import sqlite3
from typing import Callable

from lab.store import Claim


def claim(conn: sqlite3.Connection, owner: str, now: int, lease_ms: int) -> Claim | None:
    t, ms = int(now), int(lease_ms)
    free = f"(status = 'pending' OR (status = 'leased' AND lease_until <= {t}))"
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute(f"UPDATE jobs SET status = 'quarantined'"
                     f" WHERE {free} AND attempts >= max_attempts")
        conn.execute(f"UPDATE jobs SET status = 'quarantined' WHERE {free} AND deadline <= {t}")
        row = conn.execute(f"SELECT id FROM jobs WHERE {free} AND attempts < max_attempts"
                           f" AND deadline > {t} ORDER BY id LIMIT 1").fetchone()
        stamp = None
        if row is not None:
            stamp = conn.execute(
                "UPDATE jobs SET status = 'leased', owner = ?, token = token + 1,"
                f" attempts = attempts + 1, lease_until = iif({t} + {ms} < deadline,"
                f" {t} + {ms}, deadline) WHERE id = {int(row[0])}"
                " RETURNING id, qty, owner, token, attempts, lease_until", (owner,)).fetchone()
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return None if stamp is None else Claim(*stamp)


def finish(conn: sqlite3.Connection, claim: Claim, now: int) -> bool:
    cur = conn.execute(
        f"UPDATE jobs SET status = 'done', finished_at = {int(now)}"
        f" WHERE id = {int(claim.id)} AND status = 'leased' AND owner = ?"
        f" AND token = {int(claim.token)} AND attempts = {int(claim.attempt)}"
        f" AND lease_until = {int(claim.lease_until)}"
        f" AND {int(now)} < MIN(lease_until, deadline)", (claim.owner,))
    return cur.rowcount == 1


def work_once(conn: sqlite3.Connection, owner: str, send: Callable[[Claim], object],
              clock: Callable[[], int], lease_ms: int) -> bool | None:
    c = claim(conn, owner, clock(), lease_ms)
    if c is None:
        return None
    send(c)
    return finish(conn, c, clock())
