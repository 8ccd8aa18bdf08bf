"""claim returns None without committing: the BEGIN IMMEDIATE stays open and holds the write lock.

The early return skips the COMMIT, so the connection is left in a transaction and every other
writer is blocked until it is closed."""

from _claim_parts import QUARANTINE, SELECT, UPDATE
from _kit import reference_finish as finish
from _kit import work_once_with

from lab.store import Claim

EXPECT_FAIL = {"empty-queue-returns-none"}
# collateral: after a None the open transaction blocks the grader's reads and writes or makes the
# next BEGIN fail
MAY_FAIL = {"quarantine-before-new-token", "quarantine-spares-valid-lease",
            "requeue-token-increases", "skips-done-and-quarantined",
            "valid-lease-never-handed-over"}


def claim(conn, owner, now, lease_ms):
    params = {"owner": owner, "now": now, "lease_ms": lease_ms}
    conn.execute("BEGIN IMMEDIATE")
    conn.execute(QUARANTINE, params)
    row = conn.execute(SELECT, params).fetchone()
    if row is None:
        return None
    stamp = conn.execute(UPDATE, {**params, "id": row[0]}).fetchone()
    conn.execute("COMMIT")
    return Claim(*stamp)


work_once = work_once_with(claim, finish)
