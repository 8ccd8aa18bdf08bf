"""A correct implementation whose finish runs a table-less SELECT whose comment names jobs.

finish checks the SQLite library with `SELECT sqlite_version()  -- RETURNING on jobs needs 3.35`
before its one conditional UPDATE: one statement on jobs, atomic on its own, so it is correct.
The grader used to find jobs in the comment and ask for a BEGIN IMMEDIATE around two statements
on jobs (finish-leaves-no-transaction, -2).
"""

from __future__ import annotations

from solutions.queue import claim, work_once as _unused  # noqa: F401
from solutions.queue import finish as _reference_finish


def finish(conn, claim, now):
    conn.execute("SELECT sqlite_version()  -- RETURNING on jobs needs 3.35").fetchone()
    return _reference_finish(conn, claim, now)


def work_once(conn, owner, send, clock, lease_ms):
    c = claim(conn, owner, clock(), lease_ms)
    if c is None:
        return None
    send(c)
    return finish(conn, c, clock())
