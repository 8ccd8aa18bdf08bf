"""claim looks for a free job before BEGIN IMMEDIATE, then locks and takes it.

The read holds no lock: two workers can both see the same pending row as free, and both go on
to lease it (the update is by id, and runs after the lock is taken, too late)."""

from _claim_steps import lease, quarantine, select
from _kit import reference_finish as finish
from _kit import work_once_with

EXPECT_FAIL = {"claim-in-one-immediate-transaction"}
EXPECT_TEXT = {"claim-in-one-immediate-transaction": "outside its transaction"}


def claim(conn, owner, now, lease_ms):
    job = select(conn, now)  # look first ...
    conn.execute("BEGIN IMMEDIATE")  # ... lock later
    try:
        quarantine(conn, now)
        c = None if job is None else lease(conn, job, owner, now, lease_ms)
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return c


work_once = work_once_with(claim, finish)
