"""claim lets Python's sqlite3 open its transaction (isolation_level = 'IMMEDIATE') and never
sets it back to None.

claim itself is right; but the connection is left in the module's implicit-transaction mode, so
the next plain UPDATE on it (finish's single conditional UPDATE) opens a transaction nobody
commits, and every other worker waits on its lock."""

from _claim_parts import all_steps
from _kit import reference_finish as finish
from _kit import work_once_with

# the finishes after it: finish's plain UPDATE opens the transaction the module's mode opens,
# nobody commits it, and the row read by the check shows the job still leased
EXPECT_FAIL = {"claim-in-one-immediate-transaction", "finish-before-expiry", "lesson-timeline"}
EXPECT_TEXT = {"claim-in-one-immediate-transaction": "isolation_level",
               # the cause (issue 38.5), not the row finish left uncommitted
               "finish-before-expiry": "claim set its connection's isolation_level and left it"}
EXPECT_NO_TEXT = {"finish-before-expiry": "the value is right, the row is wrong"}
EXPECT_CAUSE = {"finish-before-expiry": "isolation-level-changed",
                "lesson-timeline": "isolation-level-changed"}
# collateral: finish after it leaves the transaction the module opened
MAY_FAIL = {"work-once-empty-queue", "same-name-restart",
            "valid-lease-never-handed-over", "forged-stamp-id", "forged-stamp-owner",
            "forged-stamp-token", "forged-stamp-attempt", "forged-stamp-lease-until",
            "double-finish-rejected", "skips-done-and-quarantined", "empty-queue-returns-none",
            "finish-at-deadline", "finish-at-moved-deadline", "quarantine-spares-valid-lease",
            "finish-leaves-no-transaction", "work-once-fresh-clock", "lock-free-during-send",
            "integration-run", "random-timelines", "locked-database-raises",
            # a finish that lands, inside send or after it
            "late-finish-in-time", "late-finish-job-done"}
# issue 38: every call is also held to the contract's rules after it (no transaction or
# statement left open, every row as the model makes it), at the domain's sizes
MAY_FAIL |= {
    'finish-after-expiry', 'finish-at-expiry', 'finish-on-quarantined-rejected',
    'journal-mode-stays-delete', 'late-finish-lease-taken', 'late-finish-past-deadline',
    'late-finish-same-name', 'lowest-id-first'}


def claim(conn, owner, now, lease_ms):
    conn.isolation_level = "IMMEDIATE"  # the module issues BEGIN IMMEDIATE before the first write
    try:
        result = all_steps(conn, owner, now, lease_ms)
        conn.commit()
    except BaseException:
        conn.rollback()
        raise
    return result


work_once = work_once_with(claim, finish)
