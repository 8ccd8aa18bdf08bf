"""claim rolls back unconditionally when anything fails, even when BEGIN IMMEDIATE itself failed.

When the database is locked, BEGIN fails and no transaction is open: the ROLLBACK then raises
"cannot rollback - no transaction is active", which replaces "database is locked"."""

from _claim_parts import all_steps
from _kit import reference_finish as finish
from _kit import work_once_with

EXPECT_FAIL = {"locked-database-raises"}
EXPECT_TEXT = {"locked-database-raises": "cannot rollback"}


def claim(conn, owner, now, lease_ms):
    try:
        conn.execute("BEGIN IMMEDIATE")
        result = all_steps(conn, owner, now, lease_ms)
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return result


work_once = work_once_with(claim, finish)
