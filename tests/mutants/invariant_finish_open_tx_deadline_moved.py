"""finish returns False without ending its BEGIN IMMEDIATE when the operator moved the deadline
under a valid lease.

The branch is reached only when the job's deadline is now earlier than its lease_until (the
operator moved it after the claim) and the deadline has passed: the rejection is right, but
the write lock stays held."""

from _finish_steps import is_current, mark_done, read
from _kit import reference_claim as claim
from _kit import work_once_with

EXPECT_FAIL = {"finish-at-moved-deadline"}
MAY_FAIL = {"random-timelines", "late-finish-past-deadline"}
EXPECT_TEXT = {"finish-at-moved-deadline": "still had a transaction open"}


def finish(conn, claim, now):
    conn.execute("BEGIN IMMEDIATE")
    try:
        row = read(conn, claim.id)
        if (row is not None and row["lease_until"] is not None
                and row["deadline"] < row["lease_until"] and now >= row["deadline"]):
            return False  # moved deadline, passed: rejected (the transaction is left open)
        ok = is_current(row, claim, now)
        if ok:
            mark_done(conn, claim.id, now)
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return ok


work_once = work_once_with(claim, finish)
