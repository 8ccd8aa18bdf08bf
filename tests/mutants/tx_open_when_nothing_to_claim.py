"""claim returns None from inside its BEGIN IMMEDIATE when nothing is claimable, without COMMIT.

The path that finds no job forgets to end the transaction: the write lock stays held on conn,
every other worker and new intake waits, and the next claim on conn cannot even BEGIN."""

from _claim_parts import lease, quarantine, select
from _kit import reference_finish as finish
from _kit import work_once_with

EXPECT_FAIL = {"claim-in-one-immediate-transaction", "empty-queue-returns-none"}
# collateral: after a None the open transaction blocks the grader's reads and writes, or makes
# the next BEGIN on conn fail
MAY_FAIL = {"quarantine-before-new-token", "quarantine-spares-valid-lease",
            "requeue-token-increases", "skips-done-and-quarantined",
            "valid-lease-never-handed-over", "random-timelines",
            "quarantine-past-deadline"}  # its claim's quarantine of the crowd never commits
EXPECT_TEXT = {"claim-in-one-immediate-transaction": "still open on conn"}
# issue 38: every call is also held to the contract's rules after it (no transaction or
# statement left open, every row as the model makes it), at the domain's sizes
MAY_FAIL |= {'lowest-id-first', 'reclaim-before-expiry', 'work-once-empty-queue'}


def claim(conn, owner, now, lease_ms):
    conn.execute("BEGIN IMMEDIATE")
    try:
        quarantine(conn, now)
        job = select(conn, now)
        if job is None:
            return None
        c = lease(conn, job, owner, now, lease_ms)
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return c


work_once = work_once_with(claim, finish)
