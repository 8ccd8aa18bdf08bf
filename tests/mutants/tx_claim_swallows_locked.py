"""claim catches sqlite3.OperationalError ("database is locked"), rolls back and returns None.

A write lock held past the busy timeout looks to the caller like an empty queue: workers go
idle while the queue is stuck, and nobody learns why."""

import sqlite3

from _claim_parts import all_steps
from _kit import reference_finish as finish
from _kit import work_once_with

# Every OperationalError is swallowed: the fault that is not a lock too.
EXPECT_FAIL = {"locked-database-raises", "claim-rolls-back-on-error"}
EXPECT_TEXT = {"locked-database-raises": "claim met sqlite3.OperationalError (database is "
                                         "locked). It returned None instead of raising"}


def claim(conn, owner, now, lease_ms):
    try:
        conn.execute("BEGIN IMMEDIATE")
        c = all_steps(conn, owner, now, lease_ms)
        conn.execute("COMMIT")
    except sqlite3.OperationalError:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        return None
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return c


work_once = work_once_with(claim, finish)
