"""claim ends the lease one millisecond before the deadline: lease_until = min(now + lease_ms,
deadline - 1) ("the lease must end before the deadline").

finish already requires now < lease_until, so a lease ending at the deadline is never valid at
it; the extra millisecond only takes the last valid instant, deadline - 1, from the holder."""

from _claim_parts import UPDATE, claim_with
from _kit import reference_finish as finish
from _kit import work_once_with

LIGHT = True  # a variant: graded here and in drawn worlds, not by the parity and the sweep
EXPECT_FAIL = {"deadline-clamp", "finish-at-deadline"}
MAY_FAIL = {"random-timelines"}  # the same bug, met again on a random timeline
EXPECT_TEXT = {"deadline-clamp": "the contract gives lease_until = min(now + lease_ms, deadline)"}

claim = claim_with(update=UPDATE.replace("MIN(:now + :lease_ms, deadline)",
                                         "MIN(:now + :lease_ms, deadline - 1)"))
work_once = work_once_with(claim, finish)
