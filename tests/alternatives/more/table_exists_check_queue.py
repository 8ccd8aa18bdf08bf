"""A correct implementation whose claim first checks that the jobs table exists.

A defensive claim reads `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name =
'jobs'` before it takes the write lock (a read of the schema table; 'jobs' is a string literal,
not the table) and raises a clear error when init_db was never run. No row of jobs is read
outside the reference's transaction: correct. The grader used to match the word jobs inside the
string literal (claim-in-one-immediate-transaction, -3).
"""

from __future__ import annotations

import sqlite3
from typing import Callable

from lab.store import Claim
from solutions.queue import claim as _reference_claim
from solutions.queue import finish


def claim(conn: sqlite3.Connection, owner: str, now: int, lease_ms: int) -> Claim | None:
    (tables,) = conn.execute("SELECT count(*) FROM sqlite_master"
                             " WHERE type = 'table' AND name = 'jobs'").fetchone()
    if tables != 1:
        raise RuntimeError("no jobs table: run lab.store.init_db(conn) first")
    return _reference_claim(conn, owner, now, lease_ms)


def work_once(conn: sqlite3.Connection, owner: str, send: Callable[[Claim], object],
              clock: Callable[[], int], lease_ms: int) -> bool | None:
    c = claim(conn, owner, clock(), lease_ms)
    if c is None:
        return None
    send(c)
    return finish(conn, c, clock())
