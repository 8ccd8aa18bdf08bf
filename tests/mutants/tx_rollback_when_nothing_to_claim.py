"""claim ends its transaction with ROLLBACK when nothing is claimable ("there is nothing to
save"), which undoes the quarantine it just made.

The quarantine is part of every claim, also one that then returns None: rolled back, the spent
or overdue jobs stay leased or pending, and no claim that finds nothing ever moves them."""

from _claim_parts import quarantine, select, lease
from _kit import reference_finish as finish
from _kit import work_once_with

LIGHT = True  # a variant: graded here and in drawn worlds, not by the parity and the sweep
EXPECT_FAIL = {"quarantine-before-new-token", "quarantine-past-deadline",
               "requeue-token-increases", "skips-done-and-quarantined"}
MAY_FAIL = {"random-timelines"}  # the same bug, met again on a random timeline
EXPECT_TEXT = {"quarantine-before-new-token": "Every attempt is used and the lease has run out"}


def claim(conn, owner, now, lease_ms):
    conn.execute("BEGIN IMMEDIATE")
    try:
        quarantine(conn, now)
        job = select(conn, now)
        if job is None:
            conn.execute("ROLLBACK")
            return None
        c = lease(conn, job, owner, now, lease_ms)
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return c


work_once = work_once_with(claim, finish)
