"""work_once returns None when claim raises a sqlite3 error other than "database is locked"
("the queue is unavailable: nothing to do").

None means "nothing to claim": the caller waits and polls again while the database is failing,
and never learns why. The grader's second fault (an OperationalError that is not a lock), met
by the claim inside work_once, catches it."""

import sqlite3

from _kit import reference_claim as claim
from _kit import reference_finish as finish

EXPECT_FAIL = {"claim-rolls-back-on-error"}
EXPECT_TEXT = {"claim-rolls-back-on-error": "the claim inside work_once fail with a database "
                                            "error that is not a lock"}


def work_once(conn, owner, send, clock, lease_ms):
    try:
        c = claim(conn, owner, clock(), lease_ms)
    except sqlite3.Error as err:
        if "locked" in str(err):
            raise
        return None
    if c is None:
        return None
    send(c)
    return finish(conn, c, clock())
