"""claim rolls back on a database error but then returns None instead of re-raising.

The caller is told "nothing to claim" while the queue is failing: workers go idle and nobody
learns that claims are broken."""

import sqlite3

from _claim_parts import all_steps
from _kit import reference_finish as finish
from _kit import work_once_with

EXPECT_FAIL = {"claim-rolls-back-on-error", "locked-database-raises"}  # a locked COMMIT too
EXPECT_TEXT = {"claim-rolls-back-on-error": "instead of letting the error propagate"}


def claim(conn, owner, now, lease_ms):
    conn.execute("BEGIN IMMEDIATE")
    try:
        c = all_steps(conn, owner, now, lease_ms)
        conn.execute("COMMIT")
    except sqlite3.Error:
        conn.execute("ROLLBACK")
        return None
    return c


work_once = work_once_with(claim, finish)
