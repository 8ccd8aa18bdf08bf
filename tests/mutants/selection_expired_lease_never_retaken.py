"""claim selects pending jobs only: a job whose lease has run out is never handed out again.

A worker that dies keeps its job forever (until the deadline quarantines it). The checks that
test this rule fail on it; the checks whose setup needs a re-claim (a late finish after someone
else took the job over) stop at that setup step and say so, instead of blaming the rule they
test."""

from _claim_parts import NOT_VALID, SELECT, claim_with
from _kit import reference_finish as finish
from _kit import work_once_with

EXPECT_FAIL = {"reclaim-at-expiry", "reclaim-after-expiry", "claim-result-matches-row",
               "lowest-id-first", "skips-done-and-quarantined",
               # these stop at their setup's re-claim
               "lesson-timeline", "same-name-restart", "quarantine-before-new-token"}
MAY_FAIL = {"finish-leaves-no-transaction", "integration-run", "random-timelines",
            # the other worker's claim at expiry, inside send
            "late-finish-job-done", "late-finish-lease-taken"}
EXPECT_TEXT = {"lesson-timeline": "Setting up this check: {B} claims",
               "same-name-restart": "This check tests “A restarted worker's old stamp is rejected",
               "reclaim-at-expiry": "Hint:"}

claim = claim_with(select=SELECT.replace(NOT_VALID, "status = 'pending'"))
work_once = work_once_with(claim, finish)
