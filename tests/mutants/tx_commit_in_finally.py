"""claim always COMMITs in a finally block, also when a statement inside failed.

The error propagates, but the work done before it (the quarantine) is committed: the queue
changes although the caller was told the claim failed."""

from _claim_parts import all_steps
from _kit import reference_finish as finish
from _kit import work_once_with

EXPECT_FAIL = {"claim-rolls-back-on-error"}
EXPECT_TEXT = {"claim-rolls-back-on-error": "must be rolled back"}
MAY_FAIL = {"locked-database-raises"}  # the COMMIT in finally meets a reader: it fails, left open


def claim(conn, owner, now, lease_ms):
    conn.execute("BEGIN IMMEDIATE")
    try:
        return all_steps(conn, owner, now, lease_ms)
    finally:
        conn.execute("COMMIT")


work_once = work_once_with(claim, finish)
