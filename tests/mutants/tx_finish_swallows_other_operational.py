"""finish re-raises "database is locked" but answers False for any other
sqlite3.OperationalError (a full disk, an I/O error).

A failed finish is not a rejected stamp: the worker drops work it has done and sent, and the
job is delivered again once its lease runs out. The grader's second fault (an OperationalError
that is not a lock) catches it."""

import sqlite3

from _finish_parts import update_where
from _kit import reference_claim as claim
from _kit import work_once_with

EXPECT_FAIL = {"finish-leaves-no-transaction"}
EXPECT_TEXT = {"finish-leaves-no-transaction": "a database error that is not a lock: "
                                               "sqlite3.OperationalError (user-defined function "
                                               "raised exception), as a full disk or an I/O "
                                               "error would. finish returned False"}


def finish(conn, claim, now):
    try:
        return update_where(conn, claim, now).rowcount == 1
    except sqlite3.OperationalError as err:
        if "locked" in str(err):
            raise
        return False


work_once = work_once_with(claim, finish)
