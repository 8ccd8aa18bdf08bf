"""claim takes leased jobs without looking at lease_until: a valid lease goes to another worker.

The selection asks for status 'pending' or 'leased' and forgets that a leased job is free only
once lease_until <= now."""

from _claim_parts import NOT_VALID, SELECT, claim_with
from _kit import reference_finish as finish
from _kit import work_once_with

EXPECT_FAIL = {"empty-queue-returns-none", "race-one-winner", "reclaim-before-expiry",
               "valid-lease-never-handed-over"}
# collateral: these checks set up a second worker's claim while A holds a job, and the bug
# hands that worker A's job
MAY_FAIL = {"finish-at-deadline", "finish-at-moved-deadline", "forged-stamp-attempt",
            "forged-stamp-id", "forged-stamp-lease-until", "forged-stamp-owner",
            "forged-stamp-token", "lock-free-during-send", "lowest-id-first", "random-timelines",
            "late-finish-in-time"}  # the other worker takes the job inside A's send
# issue 38: every call is also held to the contract's rules after it (no transaction or
# statement left open, every row as the model makes it), at the domain's sizes
MAY_FAIL |= {
    'claim-in-one-immediate-transaction', 'locked-database-raises', 'quarantine-past-deadline'}

claim = claim_with(select=SELECT.replace(NOT_VALID, "status IN ('pending', 'leased')"))
work_once = work_once_with(claim, finish)
