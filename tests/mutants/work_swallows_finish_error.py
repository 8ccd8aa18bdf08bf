"""work_once catches a database error from finish and returns False.

"Not finished" reads like False; but a failed finish (the database locked, the disk full) is not
a rejected stamp: the caller must learn that the job's fate is unknown, not that it was lost."""

import sqlite3

from _kit import reference_claim as claim
from _kit import reference_finish as finish

EXPECT_FAIL = {"locked-database-raises"}
EXPECT_TEXT = {"locked-database-raises": "work_once"}


def work_once(conn, owner, send, clock, lease_ms):
    c = claim(conn, owner, clock(), lease_ms)
    if c is None:
        return None
    send(c)
    try:
        return finish(conn, c, clock())
    except sqlite3.Error:
        return False
