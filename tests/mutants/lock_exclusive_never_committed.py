"""claim begins its transaction with BEGIN EXCLUSIVE and never commits it: every other connection
is locked out for good, readers too (the rollback journal's exclusive lock).

The grader's own reads then find the database locked: journal-mode-stays-delete and the lock
probe say it is the student's lock (they used to end in "The grader itself failed" or a
misleading timeout), the checks that read rows say the grader could not read them."""

from _kit import reference_finish, work_once_with

from lab.store import Claim

EXPECT_FAIL = {"claim-in-one-immediate-transaction", "empty-queue-returns-none",
               "journal-mode-stays-delete", "lock-free-during-send", "random-timelines"}
MAY_FAIL = {  # the same lock, met by every check that reads a row after a claim
    "finish-before-expiry", "finish-at-expiry", "finish-after-expiry", "reclaim-before-expiry",
    "reclaim-at-expiry", "reclaim-after-expiry", "lesson-timeline", "same-name-restart",
    "valid-lease-never-handed-over", "requeue-token-increases", "forged-stamp-id",
    "forged-stamp-owner", "forged-stamp-token", "forged-stamp-attempt",
    "forged-stamp-lease-until", "double-finish-rejected", "finish-on-quarantined-rejected",
    "claim-result-matches-row", "lowest-id-first", "skips-done-and-quarantined",
    "deadline-clamp", "finish-at-deadline", "finish-at-moved-deadline",
    "quarantine-before-new-token", "quarantine-spares-valid-lease", "quarantine-past-deadline",
    "claim-rolls-back-on-error", "finish-leaves-no-transaction", "locked-database-raises",
    "work-once-fresh-clock", "work-once-send-raises", "work-once-empty-queue", "race-one-winner",
    "crash-mid-claim-atomic", "integration-run",
    # the same lock, met inside and after send
    "late-finish-in-time", "late-finish-job-done", "late-finish-lease-taken",
    "late-finish-past-deadline", "late-finish-same-name",
}
EXPECT_OUTCOME = {"lock-free-during-send": "errored"}
EXPECT_TEXT = {
    "journal-mode-stays-delete": "the grader could not even read the database",
    "lock-free-during-send": "database is locked",
}
EXPECT_NO_TEXT = {
    "journal-mode-stays-delete": "Timed out",
    "lock-free-during-send": "The grader itself failed",
}


def claim(conn, owner, now, lease_ms):
    conn.execute("BEGIN EXCLUSIVE")
    row = conn.execute("SELECT id FROM jobs WHERE status = 'pending' ORDER BY id LIMIT 1"
                       ).fetchone()
    if row is None:
        return None
    return Claim(*conn.execute(
        "UPDATE jobs SET status = 'leased', owner = ?, token = token + 1,"
        " attempts = attempts + 1, lease_until = ? WHERE id = ?"
        " RETURNING id, qty, owner, token, attempts, lease_until",
        (owner, now + lease_ms, row[0])).fetchone())  # and no COMMIT, on any path


finish = reference_finish
work_once = work_once_with(claim, finish)
