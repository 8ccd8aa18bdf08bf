"""claim clamps the lease length to the deadline as if it were a duration:
lease_until = now + min(lease_ms, deadline).

The deadline is an instant on the clock, not a length: the clamp is right only for claims made
at 0 ms, and later claims get leases that outlive the job's deadline."""

from _claim_parts import UPDATE, claim_with
from _kit import reference_finish as finish
from _kit import work_once_with

EXPECT_FAIL = {"random-timelines"}
EXPECT_TEXT = {"random-timelines": 'A claims (lease_ms=1000) → token=1, lease_until=404939'}

claim = claim_with(update=UPDATE.replace("MIN(:now + :lease_ms, deadline)",
                                         ":now + MIN(:lease_ms, deadline)"))
work_once = work_once_with(claim, finish)
