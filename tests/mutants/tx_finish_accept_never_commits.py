"""finish marks the job done inside its BEGIN IMMEDIATE and returns True without COMMIT.

The accepted path forgets to commit: True comes back, as the contract says, but the change is
in a transaction still open on conn, so every other connection sees the job still leased. The
report must name the transaction left open as the cause, not the row ("the value is right, the
row is wrong" would send the student to the UPDATE, which is right)."""

from _finish_steps import is_current, mark_done, read
from _kit import reference_claim as claim
from _kit import work_once_with

LIGHT = True  # a variant of tx_finish_open_on_reject: the other path out of the same BEGIN

EXPECT_FAIL = {"finish-before-expiry", "finish-leaves-no-transaction", "lesson-timeline",
               "double-finish-rejected"}
# collateral: every check that finishes and then reads the row, or calls again on conn (the next
# BEGIN inside the transaction left open), or writes beside it (its lock)
MAY_FAIL = {
    "empty-queue-returns-none", "finish-at-deadline",
    "finish-at-moved-deadline", "forged-stamp-attempt", "forged-stamp-id",
    "forged-stamp-lease-until", "forged-stamp-owner", "forged-stamp-token", "integration-run",
    "journal-mode-stays-delete", "late-finish-in-time", "late-finish-job-done",
    "lock-free-during-send", "lowest-id-first", "quarantine-spares-valid-lease",
    "random-timelines", "same-name-restart", "skips-done-and-quarantined",
    "valid-lease-never-handed-over", "work-once-empty-queue", "work-once-fresh-clock"}
EXPECT_CAUSE = {"finish-before-expiry": "transaction-left-open",
                "lesson-timeline": "transaction-left-open"}
EXPECT_TEXT = {"finish-before-expiry": "finish returned with its transaction still open"}
EXPECT_NO_TEXT = {"finish-before-expiry": "the value is right, the row is wrong"}


def finish(conn, claim, now):
    conn.execute("BEGIN IMMEDIATE")
    try:
        if not is_current(read(conn, claim.id), claim, now):
            conn.execute("ROLLBACK")
            return False
        mark_done(conn, claim.id, now)
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return True


work_once = work_once_with(claim, finish)
