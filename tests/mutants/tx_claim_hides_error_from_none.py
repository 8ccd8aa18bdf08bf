"""claim rolls back on error and raises RuntimeError('claim failed') `from None`, hiding the
database error.

`from None` sets __suppress_context__: the traceback no longer shows the sqlite3 error, and the
caller cannot tell a lock to retry from a full disk. A plain `raise RuntimeError(...)` inside
the except (its __context__ still shown) or `raise ... from err` would keep it."""

from _claim_parts import all_steps
from _kit import reference_finish as finish
from _kit import work_once_with

EXPECT_FAIL = {"claim-rolls-back-on-error", "locked-database-raises"}
EXPECT_TEXT = {"claim-rolls-back-on-error": "and raised RuntimeError: claim failed with the "
                                            "database error hidden",
               "locked-database-raises": "claim met OperationalError: database is locked and "
                                         "raised RuntimeError: claim failed with the database "
                                         "error hidden"}


def claim(conn, owner, now, lease_ms):
    conn.execute("BEGIN IMMEDIATE")
    try:
        c = all_steps(conn, owner, now, lease_ms)
        conn.execute("COMMIT")
    except Exception:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise RuntimeError("claim failed") from None
    return c


work_once = work_once_with(claim, finish)
