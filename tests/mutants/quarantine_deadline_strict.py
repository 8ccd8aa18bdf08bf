"""claim's quarantine reads "past its deadline" as deadline < now: a job due exactly now stays put.

The selection rightly skips it (deadline > now fails), so nothing is handed out wrongly; but at
now == deadline the job's budget is spent, and the claim that meets it must quarantine it. The
edge is the same instant as the lease's: reached means over."""

from _claim_parts import QUARANTINE, claim_with
from _kit import reference_finish as finish
from _kit import work_once_with

LIGHT = True  # a variant: graded here and in drawn worlds, not by the parity and the sweep
EXPECT_FAIL = {"quarantine-past-deadline"}
MAY_FAIL = {"random-timelines"}  # the same bug, met again on a random timeline
EXPECT_TEXT = {"quarantine-past-deadline": "is past its deadline at"}
# issue 38: every call is also held to the contract's rules after it (no transaction or
# statement left open, every row as the model makes it), at the domain's sizes
MAY_FAIL |= {'claim-rolls-back-on-error'}

claim = claim_with(quarantine=QUARANTINE.replace("deadline <= :now", "deadline < :now"))
work_once = work_once_with(claim, finish)
