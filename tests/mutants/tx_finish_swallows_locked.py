"""finish catches sqlite3.OperationalError ("database is locked") and returns False.

The worker takes a locked database for a rejected stamp: it drops work it has done and sent,
and the job is delivered again once its lease runs out."""

import sqlite3

from _finish_parts import update_where
from _kit import reference_claim as claim
from _kit import work_once_with

# Every OperationalError is swallowed: the fault that is not a lock too.
EXPECT_FAIL = {"locked-database-raises", "finish-leaves-no-transaction"}
EXPECT_TEXT = {"locked-database-raises": "finish met sqlite3.OperationalError (database is "
                                         "locked). It returned False instead of raising"}


def finish(conn, claim, now):
    try:
        return update_where(conn, claim, now).rowcount == 1
    except sqlite3.OperationalError:
        return False


work_once = work_once_with(claim, finish)
