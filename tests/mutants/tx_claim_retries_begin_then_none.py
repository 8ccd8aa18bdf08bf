"""claim retries BEGIN IMMEDIATE three times when the database is locked, then gives up quietly
and returns None.

Retrying is no fix: after the last try the lock is still held, and the caller is told "nothing
to claim" instead of learning that the queue is stuck."""

import sqlite3

from _claim_parts import all_steps
from _kit import reference_finish as finish
from _kit import work_once_with

EXPECT_FAIL = {"locked-database-raises"}
EXPECT_TEXT = {"locked-database-raises": "It returned None instead of raising"}

TRIES = 3


def claim(conn, owner, now, lease_ms):
    for _ in range(TRIES):
        try:
            conn.execute("BEGIN IMMEDIATE")
            break
        except sqlite3.OperationalError:
            continue
    else:
        return None
    try:
        c = all_steps(conn, owner, now, lease_ms)
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return c


work_once = work_once_with(claim, finish)
