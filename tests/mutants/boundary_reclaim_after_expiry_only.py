"""claim takes an expired lease only once lease_until < now (strict), in its quarantine and its
selection alike: at exactly lease_until nobody may hold the job.

The holder's finish is already rejected at now == lease_until, so the strict test leaves a gap of
one instant in which the job is nobody's; the lesson's rule has neither an overlap nor a gap."""

from _claim_parts import QUARANTINE, SELECT, claim_with
from _kit import reference_finish as finish
from _kit import work_once_with

LIGHT = True  # a variant: graded here and in drawn worlds, not by the parity and the sweep
EXPECT_FAIL = {"reclaim-at-expiry", "lesson-timeline", "same-name-restart",
               "requeue-token-increases", "skips-done-and-quarantined",
               "quarantine-before-new-token"}
MAY_FAIL = {"random-timelines",  # the same bug, met again on a random timeline
            # the other worker's claim at expiry, inside send
            "late-finish-job-done", "late-finish-lease-taken"}
EXPECT_TEXT = {"reclaim-at-expiry": "Came back: None"}

claim = claim_with(quarantine=QUARANTINE.replace("lease_until <= :now", "lease_until < :now"),
                   select=SELECT.replace("lease_until <= :now", "lease_until < :now"))
work_once = work_once_with(claim, finish)
