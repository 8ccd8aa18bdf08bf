"""claim counts a job's attempts with its token: it quarantines at token >= max_attempts and
selects token < max_attempts.

The two numbers move together until a requeue, which resets attempts and keeps the token: a
requeued job is then quarantined again at once, with every attempt still to spare."""

from _claim_parts import QUARANTINE, SELECT, claim_with
from _kit import reference_finish as finish
from _kit import work_once_with

LIGHT = True  # a variant: graded here and in drawn worlds, not by the parity and the sweep
EXPECT_FAIL = {"requeue-token-increases", "claim-result-matches-row"}
MAY_FAIL = {"random-timelines"}  # the same bug, met again on a random timeline
EXPECT_TEXT = {"requeue-token-increases": "After the requeue the token must keep rising"}
# issue 38: every call is also held to the contract's rules after it (no transaction or
# statement left open, every row as the model makes it), at the domain's sizes
MAY_FAIL |= {'lowest-id-first'}

claim = claim_with(
    quarantine=QUARANTINE.replace("attempts >= max_attempts", "token >= max_attempts"),
    select=SELECT.replace("attempts < max_attempts", "token < max_attempts"))
work_once = work_once_with(claim, finish)
