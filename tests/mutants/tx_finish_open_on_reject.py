"""finish returns False from inside its BEGIN IMMEDIATE without ending the transaction.

The rejected path forgets COMMIT/ROLLBACK: the write lock stays held on conn, so the next claim
on it fails ("cannot start a transaction within a transaction") and other workers wait."""

from _finish_steps import is_current, mark_done, read
from _kit import reference_claim as claim
from _kit import work_once_with

EXPECT_FAIL = {"finish-leaves-no-transaction"}
EXPECT_TEXT = {"finish-leaves-no-transaction": "still open on conn"}
# collateral: the next call on conn cannot BEGIN inside the transaction left open
MAY_FAIL = {"forged-stamp-attempt", "forged-stamp-id", "forged-stamp-lease-until",
            "forged-stamp-owner", "forged-stamp-token", "integration-run", "lesson-timeline",
            "same-name-restart", "random-timelines"}
# issue 38: every call is also held to the contract's rules after it (no transaction or
# statement left open, every row as the model makes it), at the domain's sizes
MAY_FAIL |= {
    'double-finish-rejected', 'finish-after-expiry', 'finish-at-deadline', 'finish-at-expiry',
    'finish-at-moved-deadline', 'finish-on-quarantined-rejected', 'late-finish-job-done',
    'late-finish-lease-taken', 'late-finish-past-deadline', 'late-finish-same-name',
    'work-once-fresh-clock'}


def finish(conn, claim, now):
    conn.execute("BEGIN IMMEDIATE")
    try:
        if not is_current(read(conn, claim.id), claim, now):
            return False
        mark_done(conn, claim.id, now)
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return True


work_once = work_once_with(claim, finish)
