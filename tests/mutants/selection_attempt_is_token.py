"""claim hands back the token as the attempt number: the Claim differs from the row once they part.

RETURNING names token twice; the two numbers agree until a requeue keeps the token and resets
attempts, and from then on every stamp this claim returns is rejected by finish."""

from _claim_parts import UPDATE, claim_with
from _kit import reference_finish as finish
from _kit import work_once_with

EXPECT_FAIL = {"claim-result-matches-row", "requeue-token-increases"}
MAY_FAIL = {"random-timelines",  # the same bug, met again on a random timeline
            "late-finish-same-name"}  # the restarted run's claim after a requeue, inside send
# issue 38: every call is also held to the contract's rules after it (no transaction or
# statement left open, every row as the model makes it), at the domain's sizes
MAY_FAIL |= {'lowest-id-first'}

claim = claim_with(update=UPDATE.replace("RETURNING id, qty, owner, token, attempts",
                                         "RETURNING id, qty, owner, token, token"))
work_once = work_once_with(claim, finish)
