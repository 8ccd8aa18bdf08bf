"""claim's COMMIT is outside its try: when COMMIT itself fails, the transaction stays open.

COMMIT needs every reader gone; while another connection still reads, it waits its busy timeout
and fails with "database is locked", and SQLite keeps the transaction open: claim raises with
the write lock still held, and every other worker waits on it."""

from _claim_parts import all_steps
from _kit import reference_finish as finish
from _kit import work_once_with

EXPECT_FAIL = {"locked-database-raises"}
EXPECT_TEXT = {"locked-database-raises": "COMMIT"}


def claim(conn, owner, now, lease_ms):
    conn.execute("BEGIN IMMEDIATE")
    try:
        result = all_steps(conn, owner, now, lease_ms)
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
    return result


work_once = work_once_with(claim, finish)
