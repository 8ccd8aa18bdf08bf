"""claim sets `PRAGMA busy_timeout = 0`, so a second claimer does not wait for the write lock.

The transaction itself is the reference's, BEGIN IMMEDIATE first. But with no busy timeout, the
worker that reaches BEGIN IMMEDIATE while the other holds the write lock gets "database is locked"
at once instead of waiting its turn (waiting within the busy timeout is what the contract
expects). The race must say so, not blame a read before the write lock that never happens."""

from _claim_parts import all_steps, in_write_transaction
from _kit import reference_finish as finish
from _kit import work_once_with

EXPECT_FAIL = {"race-one-winner"}
EXPECT_TEXT = {"race-one-winner": "PRAGMA busy_timeout = 0"}
EXPECT_NO_TEXT = {"race-one-winner": "read first"}
# a rule of every call: claim left its connection's busy timeout lowered (issue 38), after
# every claim a check makes on the connection it hands out
MAY_FAIL = {
    "finish-before-expiry", "finish-at-expiry", "finish-after-expiry", "reclaim-before-expiry",
    "reclaim-at-expiry", "reclaim-after-expiry", "lesson-timeline", "same-name-restart",
    "valid-lease-never-handed-over", "requeue-token-increases", "forged-stamp-id",
    "forged-stamp-owner", "forged-stamp-token", "forged-stamp-attempt",
    "forged-stamp-lease-until", "double-finish-rejected", "finish-on-quarantined-rejected",
    "claim-result-matches-row", "lowest-id-first", "skips-done-and-quarantined",
    "empty-queue-returns-none", "deadline-clamp", "finish-at-deadline",
    "finish-at-moved-deadline", "quarantine-before-new-token", "quarantine-spares-valid-lease",
    "quarantine-past-deadline", "claim-in-one-immediate-transaction", "claim-rolls-back-on-error",
    "finish-leaves-no-transaction", "locked-database-raises", "journal-mode-stays-delete",
    "work-once-fresh-clock", "work-once-send-raises", "work-once-empty-queue",
    "late-finish-lease-taken", "late-finish-job-done", "late-finish-same-name",
    "late-finish-past-deadline", "late-finish-in-time", "lock-free-during-send",
    "crash-mid-claim-atomic", "random-timelines"}


def claim(conn, owner, now, lease_ms):
    conn.execute("PRAGMA busy_timeout = 0")  # "never wait": fail fast instead
    return in_write_transaction(conn, lambda: all_steps(conn, owner, now, lease_ms))


work_once = work_once_with(claim, finish)
