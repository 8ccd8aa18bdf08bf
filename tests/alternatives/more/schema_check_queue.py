"""A correct implementation whose claim reads the schema of jobs with a PRAGMA first.

A defensive claim runs `PRAGMA table_info(jobs)` before it takes the write lock, to check that
the table has the columns it needs. A PRAGMA may run anywhere (the contract), and this one reads
the schema, never a row: no job is chosen outside the reference's transaction, so it is correct
(the decision is written in docs/contract.md: a PRAGMA is never a statement on jobs). The grader
used to take it for a read of jobs before the transaction (claim-in-one-immediate-transaction,
-3).
"""

from __future__ import annotations

import sqlite3
from typing import Callable

from lab.store import Claim
from solutions.queue import claim as _reference_claim
from solutions.queue import finish

_NEEDED = {"id", "qty", "status", "owner", "lease_until", "token", "attempts", "max_attempts",
           "deadline", "finished_at"}


def claim(conn: sqlite3.Connection, owner: str, now: int, lease_ms: int) -> Claim | None:
    columns = {row[1] for row in conn.execute("PRAGMA table_info(jobs)").fetchall()}
    missing = _NEEDED - columns
    if missing:
        raise RuntimeError(f"the jobs table lacks {sorted(missing)}: run init_db first")
    return _reference_claim(conn, owner, now, lease_ms)


def work_once(conn: sqlite3.Connection, owner: str, send: Callable[[Claim], object],
              clock: Callable[[], int], lease_ms: int) -> bool | None:
    c = claim(conn, owner, clock(), lease_ms)
    if c is None:
        return None
    send(c)
    return finish(conn, c, clock())
