"""finish answers False at once, without a statement, when the stamp itself shows the lease is
over (now >= claim.lease_until): the row must match the stamp's lease_until to be accepted, so
such a stamp can never be accepted and the row stays unchanged. Otherwise one conditional
UPDATE, as the reference."""

from __future__ import annotations

import sqlite3
from typing import Callable

from lab.store import Claim
from solutions.queue import claim


def finish(conn: sqlite3.Connection, claim: Claim, now: int) -> bool:
    if now >= claim.lease_until:
        return False  # the lease this stamp carries has ended: no row can accept it
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
