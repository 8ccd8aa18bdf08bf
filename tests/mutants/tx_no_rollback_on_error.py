"""claim does not roll back when a statement inside its transaction fails.

The error propagates, but the transaction stays open on conn: its write lock is held, and every
other worker and new intake waits until it fails with 'database is locked'."""

from _claim_parts import all_steps
from _kit import reference_finish as finish
from _kit import work_once_with

EXPECT_FAIL = {"claim-rolls-back-on-error", "locked-database-raises"}  # a failed COMMIT too
EXPECT_TEXT = {"claim-rolls-back-on-error": "left its transaction open"}


def claim(conn, owner, now, lease_ms):
    conn.execute("BEGIN IMMEDIATE")
    c = all_steps(conn, owner, now, lease_ms)
    conn.execute("COMMIT")
    return c


work_once = work_once_with(claim, finish)
