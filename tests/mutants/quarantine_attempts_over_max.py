"""claim's quarantine asks attempts > max_attempts (off by one) instead of >=: a job that has used
exactly all its attempts is never quarantined.

The selection rightly stops handing it out (attempts < max_attempts fails), and attempts never
grow past max_attempts, so the job stays 'leased' to a holder whose lease ran out, for good:
the operator is never told it needs attention."""

from _claim_parts import QUARANTINE, claim_with
from _kit import reference_finish as finish
from _kit import work_once_with

LIGHT = True  # a variant: graded here and in drawn worlds, not by the parity and the sweep
EXPECT_FAIL = {"quarantine-before-new-token", "requeue-token-increases",
               "skips-done-and-quarantined"}
MAY_FAIL = {"random-timelines"}  # the same bug, met again on a random timeline
EXPECT_TEXT = {"quarantine-before-new-token": "Every attempt is used and the lease has run out"}

claim = claim_with(quarantine=QUARANTINE.replace("attempts >= max_attempts",
                                                 "attempts > max_attempts"))
work_once = work_once_with(claim, finish)
