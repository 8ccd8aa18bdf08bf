"""A queue with no queue logic at all: claim returns None, finish False, work_once None.

It raises no NotImplementedError, so every check runs it: none may pass, since nothing a check
is about ever happens. A check whose rule a do-nothing queue meets by doing nothing (the journal
mode after a claim that wrote nothing, work_once's None on an empty queue) first sees the code
take a claimable job. It scored 2."""

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
EXPECT_TEXT = {
    "journal-mode-stays-delete": "claim left its row as it was",
    "work-once-empty-queue": "work_once did not call send: it claims nothing",
}


def claim(conn, owner, now, lease_ms):
    return None


def finish(conn, claim, now):
    return False


def work_once(conn, owner, send, clock, lease_ms):
    return None
