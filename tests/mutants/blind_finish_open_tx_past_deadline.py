"""finish returns False for a job past its deadline without ending its transaction.

It reads the row inside BEGIN IMMEDIATE and returns early when the job's deadline has passed
(moved earlier by the operator): the write lock stays held, and every other worker waits."""

from _finish_steps import is_current, mark_done, read
from _kit import reference_claim as claim
from _kit import work_once_with

EXPECT_FAIL = {"random-timelines"}
EXPECT_TEXT = {"random-timelines": "after finish returned, the connection still has a transaction open"}
# issue 38: every call is also held to the contract's rules after it (no transaction or
# statement left open, every row as the model makes it), at the domain's sizes
MAY_FAIL = {'finish-at-deadline', 'finish-at-moved-deadline', 'late-finish-past-deadline'}


def finish(conn, claim, now):
    conn.execute("BEGIN IMMEDIATE")
    try:
        row = read(conn, claim.id)
        if row is not None and now >= row["deadline"]:
            return False  # the job is past its deadline (the transaction is left open)
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
