"""claim selects with ORDER BY id DESC: the newest job is taken first instead of the lowest id.

Older jobs wait behind every new arrival, and the order the contract promises is reversed."""

from _claim_parts import SELECT, claim_with
from _kit import reference_finish as finish
from _kit import work_once_with

EXPECT_FAIL = {"lowest-id-first"}
# collateral: these checks' setup claims expect the lowest id
MAY_FAIL = {"finish-at-deadline", "finish-at-moved-deadline", "lock-free-during-send",
            "quarantine-past-deadline", "skips-done-and-quarantined", "random-timelines",
            "late-finish-in-time"}  # work_once claims the higher of two jobs
# issue 38: every call is also held to the contract's rules after it (no transaction or
# statement left open, every row as the model makes it), at the domain's sizes
MAY_FAIL |= {'claim-rolls-back-on-error'}

claim = claim_with(select=SELECT.replace("ORDER BY id", "ORDER BY id DESC"))
work_once = work_once_with(claim, finish)
