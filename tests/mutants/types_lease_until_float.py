"""claim builds its Claim with lease_until as a float (now + lease_ms computed in seconds and
back): Claim(..., lease_until=1000.0).

1000.0 == 1000, so every comparison passes; but the contract's lease_until is an int of
milliseconds, and code that hands it on (a JSON field, a shared integer clock, an index) breaks
far from the bug. The grader checks each field's exact type where a Claim comes back."""

import dataclasses

from _kit import reference_claim, reference_finish as finish
from _kit import work_once_with

EXPECT_FAIL = {"claim-result-matches-row", "crash-mid-claim-atomic", "deadline-clamp",
               "empty-queue-returns-none", "integration-run", "lock-free-during-send",
               "lowest-id-first", "quarantine-past-deadline", "race-one-winner",
               "skips-done-and-quarantined", "finish-at-deadline", "finish-at-moved-deadline",
               "finish-after-expiry", "finish-at-expiry", "finish-before-expiry",
               "reclaim-after-expiry", "reclaim-at-expiry", "reclaim-before-expiry",
               "lesson-timeline", "same-name-restart", "valid-lease-never-handed-over",
               "requeue-token-increases", "forged-stamp-id", "forged-stamp-owner",
               "forged-stamp-token", "forged-stamp-attempt", "forged-stamp-lease-until",
               "double-finish-rejected", "finish-on-quarantined-rejected",
               "quarantine-before-new-token", "quarantine-spares-valid-lease",
               "finish-leaves-no-transaction", "claim-in-one-immediate-transaction",
               "claim-rolls-back-on-error", "journal-mode-stays-delete", "random-timelines",
               "work-once-fresh-clock", "work-once-send-raises", "locked-database-raises",
               "late-finish-in-time", "late-finish-job-done", "late-finish-lease-taken",
               "late-finish-past-deadline", "late-finish-same-name"}
EXPECT_TEXT = {  # one cause for every check: the file leads with it
    "reclaim-at-expiry": "claim returns a Claim whose lease_until is of type float; the contract "
                         "gives lease_until the type int",
    "race-one-winner": "whose lease_until is of type float",
    "integration-run": "whose lease_until is of type float",
    "work-once-send-raises": "whose lease_until is of type float",
}
# the claim that returned the float is shown with what it returned, not as a call that hung
EXPECT_NO_TEXT = {"race-one-winner": "(did not return)"}


def claim(conn, owner, now, lease_ms):
    c = reference_claim(conn, owner, now, lease_ms)
    return None if c is None else dataclasses.replace(c, lease_until=c.lease_until / 1000 * 1000)


work_once = work_once_with(claim, finish)
