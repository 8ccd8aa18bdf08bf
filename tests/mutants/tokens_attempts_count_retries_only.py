"""claim counts only retries in attempts: the first claim of a never-claimed job leaves attempts
at 0 (attempts = attempts + (owner IS NOT NULL)).

attempts counts claims against max_attempts: the first claim is the first attempt. Counting only
retries gives every job one claim more than its max_attempts, and the first holder's stamp says
attempt 0."""

from _claim_parts import UPDATE, claim_with
from _kit import reference_finish as finish
from _kit import work_once_with

LIGHT = True  # a variant: graded here and in drawn worlds, not by the parity and the sweep
EXPECT_FAIL = {"claim-result-matches-row", "crash-mid-claim-atomic", "deadline-clamp",
               "double-finish-rejected", "empty-queue-returns-none", "finish-after-expiry",
               "finish-at-deadline", "finish-at-expiry", "finish-at-moved-deadline",
               "finish-before-expiry", "finish-on-quarantined-rejected", "forged-stamp-attempt",
               "forged-stamp-id", "forged-stamp-lease-until", "forged-stamp-owner",
               "forged-stamp-token", "lesson-timeline", "lock-free-during-send", "lowest-id-first",
               "quarantine-before-new-token", "quarantine-past-deadline",
               "quarantine-spares-valid-lease", "race-one-winner", "reclaim-after-expiry",
               "reclaim-at-expiry", "reclaim-before-expiry", "requeue-token-increases",
               "same-name-restart", "skips-done-and-quarantined", "valid-lease-never-handed-over",
               "work-once-fresh-clock", "work-once-send-raises",
               "late-finish-in-time", "late-finish-job-done", "late-finish-lease-taken",
               "late-finish-past-deadline", "late-finish-same-name"}
MAY_FAIL = {"random-timelines"}  # the same bug, met again on a random timeline
EXPECT_TEXT = {"finish-before-expiry": "token=1, attempt=0"}
# issue 38: every call is also held to the contract's rules after it (no transaction or
# statement left open, every row as the model makes it), at the domain's sizes
MAY_FAIL |= {
    'claim-in-one-immediate-transaction', 'claim-rolls-back-on-error',
    'finish-leaves-no-transaction', 'journal-mode-stays-delete', 'locked-database-raises',
    'work-once-empty-queue'}

claim = claim_with(update=UPDATE.replace("attempts = attempts + 1,",
                                         "attempts = attempts + (owner IS NOT NULL),"))
work_once = work_once_with(claim, finish)
