"""finish finds the claimed job's row by its position: the n-th row is taken to be job n.

With jobs numbered 1, 2, 3... that is the same row; with gaps in the ids (jobs deleted, ids given
by another system, a table that did not start at 1) it is another job's row, or none."""

from _finish_steps import is_current, mark_done
from _kit import reference_claim as claim
from _kit import work_once_with

from lab.store import COLUMNS

EXPECT_FAIL = {"random-timelines"}
EXPECT_TEXT = {"random-timelines": "the last call's return value is not what the contract gives"}


def finish(conn, claim, now):
    conn.execute("BEGIN IMMEDIATE")
    try:
        found = conn.execute(f"SELECT {', '.join(COLUMNS)} FROM jobs ORDER BY id"
                             " LIMIT 1 OFFSET ?", (claim.id - 1,)).fetchone()
        row = None if found is None else dict(zip(COLUMNS, found))
        ok = row is not None and is_current({**row, "id": claim.id}, claim, now)
        if ok:
            mark_done(conn, row["id"], now)
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return ok


work_once = work_once_with(claim, finish)
