"""finish (BEGIN IMMEDIATE, read, compare, update) does not roll back when its UPDATE fails.

The error propagates with the transaction still open on conn: the lock stays held and every
other worker waits."""

from _finish_steps import is_current, mark_done, read
from _kit import reference_claim as claim
from _kit import work_once_with

EXPECT_FAIL = {"finish-leaves-no-transaction"}
EXPECT_TEXT = {"finish-leaves-no-transaction": "left its transaction open"}


def finish(conn, claim, now):
    conn.execute("BEGIN IMMEDIATE")
    current = is_current(read(conn, claim.id), claim, now)
    if current:
        mark_done(conn, claim.id, now)
    conn.execute("COMMIT")
    return current


work_once = work_once_with(claim, finish)
