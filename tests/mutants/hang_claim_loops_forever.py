"""claim loops forever (`while True: pass` at its top): it never returns, whatever the queue holds.

It stands for a retry loop whose way out was forgotten. The grader calls claim once before the
checks (grader.runner.preflight's probe), sees it hang, and every check that calls claim stops
at that call, *timed out*, "Not graded: claim hangs", without waiting for its own timeout;
work_once, built over this claim, hangs in the probe as well and its checks say so. No check
may blame the grader. finish and work_once are otherwise the reference's."""

from _kit import reference_finish as finish
from _kit import work_once_with

EXPECT_FAIL = {
    "finish-before-expiry", "finish-at-expiry", "finish-after-expiry", "reclaim-before-expiry",
    "reclaim-at-expiry", "reclaim-after-expiry", "lesson-timeline", "same-name-restart",
    "valid-lease-never-handed-over", "requeue-token-increases", "forged-stamp-id",
    "forged-stamp-owner", "forged-stamp-token", "forged-stamp-attempt",
    "forged-stamp-lease-until", "double-finish-rejected", "finish-on-quarantined-rejected",
    "claim-result-matches-row", "lowest-id-first", "skips-done-and-quarantined",
    "empty-queue-returns-none", "deadline-clamp", "finish-at-deadline",
    "finish-at-moved-deadline", "quarantine-before-new-token", "quarantine-spares-valid-lease",
    "quarantine-past-deadline", "claim-in-one-immediate-transaction",
    "claim-rolls-back-on-error", "finish-leaves-no-transaction", "locked-database-raises",
    "journal-mode-stays-delete", "work-once-fresh-clock", "work-once-send-raises",
    "work-once-empty-queue", "lock-free-during-send", "race-one-winner",
    "crash-mid-claim-atomic", "integration-run", "random-timelines",
    "late-finish-in-time", "late-finish-job-done", "late-finish-lease-taken",
    "late-finish-past-deadline", "late-finish-same-name",
}
OUTCOME = "timed_out"
EXPECT_TEXT = {
    "finish-before-expiry": "claim does not return",
    "claim-rolls-back-on-error": "claim does not return",
    "locked-database-raises": "claim does not return",
    "race-one-winner": "claim does not return",
    "crash-mid-claim-atomic": "claim does not return",
    "random-timelines": "claim does not return",
    "work-once-fresh-clock": "work_once does not return",
    "integration-run": "work_once does not return",
}
EXPECT_NO_TEXT = {  # the two that blamed the grader, waiting for their own timeouts
    "claim-rolls-back-on-error": "The grader itself failed",
    "locked-database-raises": "The grader itself failed",
}


def claim(conn, owner, now, lease_ms):
    while True:
        pass


work_once = work_once_with(claim, finish)
