"""claim sets lease_until = now + lease_ms without clamping it to the job's deadline.

The lease outlives the job's own budget: the queue says the worker may hold the job until a time
when the job must already be over."""

from _claim_parts import UPDATE, claim_with
from _kit import reference_finish as finish
from _kit import work_once_with

EXPECT_FAIL = {"deadline-clamp", "finish-at-deadline"}
MAY_FAIL = {"random-timelines"}  # the same bug, met again on a random timeline

claim = claim_with(update=UPDATE.replace("MIN(:now + :lease_ms, deadline)", ":now + :lease_ms"))
work_once = work_once_with(claim, finish)
