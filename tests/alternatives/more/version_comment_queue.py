"""A correct implementation whose claim runs a table-less SELECT whose comment names jobs.

Before its transaction claim checks the SQLite library with `SELECT sqlite_version()`, whose SQL
carries a trailing comment saying why ("RETURNING on jobs needs 3.35"). The statement reads no
table, so it may run anywhere; the transaction is the reference's: correct. The grader used to
find the word jobs in the comment and call it a statement on jobs outside the transaction
(claim-in-one-immediate-transaction, -3).
"""

from __future__ import annotations

import sqlite3
from typing import Callable

from lab.store import Claim
from solutions.queue import claim as _reference_claim
from solutions.queue import finish


def claim(conn: sqlite3.Connection, owner: str, now: int, lease_ms: int) -> Claim | None:
    (version,) = conn.execute(
        "SELECT sqlite_version()  -- UPDATE jobs ... RETURNING needs SQLite 3.35").fetchone()
    if tuple(int(p) for p in version.split(".")[:2]) < (3, 35):
        raise RuntimeError(f"SQLite {version} has no RETURNING")
    return _reference_claim(conn, owner, now, lease_ms)


def work_once(conn: sqlite3.Connection, owner: str, send: Callable[[Claim], object],
              clock: Callable[[], int], lease_ms: int) -> bool | None:
    c = claim(conn, owner, clock(), lease_ms)
    if c is None:
        return None
    send(c)
    return finish(conn, c, clock())
