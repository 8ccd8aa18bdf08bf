"""finish returns False for a stamp naming no existing job without ending its transaction.

It reads the row inside BEGIN IMMEDIATE and returns early when there is none: the write lock stays
held, and every other worker's claim waits on it."""

from _finish_steps import is_current, mark_done, read
from _kit import reference_claim as claim
from _kit import work_once_with

EXPECT_FAIL = {"random-timelines"}
EXPECT_TEXT = {"random-timelines": 'after finish returned, the connection still has a transaction open'}


def finish(conn, claim, now):
    conn.execute("BEGIN IMMEDIATE")
    try:
        row = read(conn, claim.id)
        if row is None:
            return False  # no such job (the transaction is left open)
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
