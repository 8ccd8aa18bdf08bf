"""claim derives the token from attempts (attempts + 1): after a requeue it goes back to 1.

Until a requeue the two numbers move together, so the bug hides; requeue resets attempts to 0
but keeps the token, and the next claim hands out a token that was already used."""

from _claim_parts import UPDATE, claim_with
from _kit import reference_finish as finish
from _kit import work_once_with

EXPECT_FAIL = {"requeue-token-increases", "claim-result-matches-row"}
MAY_FAIL = {"random-timelines",  # the same bug, met again on a random timeline
            "late-finish-same-name"}  # the restarted run's claim after a requeue, inside send
# issue 38: every call is also held to the contract's rules after it (no transaction or
# statement left open, every row as the model makes it), at the domain's sizes
MAY_FAIL |= {'lowest-id-first'}

claim = claim_with(update=UPDATE.replace("token = token + 1", "token = attempts + 1"))
work_once = work_once_with(claim, finish)
