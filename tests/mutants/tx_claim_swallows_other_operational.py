"""claim re-raises "database is locked" but turns any other sqlite3.OperationalError (a full
disk, an I/O error, no such table) into None.

The lock is the one database error the author thought of; the others look like "nothing to
claim" to the caller, who polls again while the database is failing and the job stays where it
was. The grader's second fault (an OperationalError that is not a lock) catches it."""

import sqlite3

from _claim_parts import all_steps
from _kit import reference_finish as finish
from _kit import work_once_with

EXPECT_FAIL = {"claim-rolls-back-on-error"}
EXPECT_TEXT = {"claim-rolls-back-on-error": "a database error that is not a lock: "
                                            "sqlite3.OperationalError (user-defined function "
                                            "raised exception), as a full disk or an I/O error "
                                            "would. claim returned None"}


def claim(conn, owner, now, lease_ms):
    conn.execute("BEGIN IMMEDIATE")
    try:
        c = all_steps(conn, owner, now, lease_ms)
        conn.execute("COMMIT")
    except sqlite3.OperationalError as err:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        if "locked" in str(err):
            raise
        return None
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return c


work_once = work_once_with(claim, finish)
