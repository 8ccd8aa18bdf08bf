"""A small class holds the SQL (module-level constants) and the logic; the three functions the
contract names are thin wrappers around one module-level instance. The class keeps no state
between calls (no cached rows), only its configuration."""

from __future__ import annotations

import sqlite3
from typing import Callable

from lab.store import Claim

STATUS_PENDING = "pending"
STATUS_LEASED = "leased"
STATUS_DONE = "done"
STATUS_QUARANTINED = "quarantined"


class LeaseQueue:
    FREE = "(status = :pending OR (status = :leased AND lease_until <= :now))"

    def __init__(self, table: str = "jobs") -> None:
        self.table = table

    def _params(self, **extra: object) -> dict[str, object]:
        return {"pending": STATUS_PENDING, "leased": STATUS_LEASED, "done": STATUS_DONE,
                "quarantined": STATUS_QUARANTINED, **extra}

    def claim(self, conn: sqlite3.Connection, owner: str, now: int,
              lease_ms: int) -> Claim | None:
        p = self._params(now=now, owner=owner, ms=lease_ms)
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.execute(f"UPDATE {self.table} SET status = :quarantined WHERE {self.FREE}"
                         " AND (attempts >= max_attempts OR deadline <= :now)", p)
            row = conn.execute(f"SELECT id FROM {self.table} WHERE {self.FREE}"
                               " AND attempts < max_attempts AND deadline > :now"
                               " ORDER BY id ASC LIMIT 1", p).fetchone()
            stamp = None
            if row is not None:
                stamp = self._lease(conn, row[0], p)
            conn.execute("COMMIT")
            return stamp
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise

    def _lease(self, conn: sqlite3.Connection, job_id: int, p: dict[str, object]) -> Claim:
        out = conn.execute(
            f"UPDATE {self.table} SET status = :leased, owner = :owner, token = token + 1,"
            " attempts = attempts + 1, lease_until = MIN(:now + :ms, deadline)"
            " WHERE id = :id RETURNING id, qty, owner, token, attempts, lease_until",
            {**p, "id": job_id}).fetchone()
        return Claim(*out)

    def finish(self, conn: sqlite3.Connection, claim: Claim, now: int) -> bool:
        p = self._params(now=now, id=claim.id, owner=claim.owner, token=claim.token,
                         attempt=claim.attempt, lease_until=claim.lease_until)
        cur = conn.execute(
            f"UPDATE {self.table} SET status = :done, finished_at = :now"
            " WHERE id = :id AND status = :leased AND owner = :owner AND token = :token"
            " AND attempts = :attempt AND lease_until = :lease_until"
            " AND :now < lease_until AND :now < deadline", p)
        return bool(cur.rowcount == 1)

    def work_once(self, conn: sqlite3.Connection, owner: str, send: Callable[[Claim], object],
                  clock: Callable[[], int], lease_ms: int) -> bool | None:
        c = self.claim(conn, owner, clock(), lease_ms)
        if c is None:
            return None
        send(c)
        return self.finish(conn, c, clock())


_QUEUE = LeaseQueue()
claim = _QUEUE.claim
finish = _QUEUE.finish
work_once = _QUEUE.work_once
