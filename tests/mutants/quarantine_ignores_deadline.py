"""claim quarantines only jobs out of attempts: jobs past their deadline stay pending/leased.

The selection never takes them, so the bug is silent; but the row keeps saying the job is live
long after its deadline, and nobody is told it needs an operator."""

from _claim_parts import QUARANTINE, claim_with
from _kit import reference_finish as finish
from _kit import work_once_with

EXPECT_FAIL = {"quarantine-past-deadline"}
MAY_FAIL = {"random-timelines"}  # the same bug, met again on a random timeline
# issue 38: every call is also held to the contract's rules after it (no transaction or
# statement left open, every row as the model makes it), at the domain's sizes
MAY_FAIL |= {'claim-rolls-back-on-error'}

claim = claim_with(quarantine=QUARANTINE.replace(
    "(attempts >= max_attempts OR deadline <= :now)", "attempts >= max_attempts"))
work_once = work_once_with(claim, finish)
