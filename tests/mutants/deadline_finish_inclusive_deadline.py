"""finish accepts now <= deadline (its lease test stays strict, now < lease_until).

After a correct claim the lease ends at the deadline at the latest, so the lease test hides the
slip; but when an operator moves the deadline earlier under a running lease, a finish at exactly
the new deadline lands, although the job's budget is spent."""

from _finish_parts import CONDITIONS, finish_where
from _kit import reference_claim as claim
from _kit import work_once_with

LIGHT = True  # a variant: graded here and in drawn worlds, not by the parity and the sweep
EXPECT_FAIL = {"finish-at-moved-deadline", "late-finish-past-deadline"}
MAY_FAIL = {"random-timelines"}  # the same bug, met again on a random timeline
EXPECT_TEXT = {"finish-at-moved-deadline": "finish must also require now < deadline"}

finish = finish_where(*(":now <= deadline" if c == ":now < deadline" else c for c in CONDITIONS))
work_once = work_once_with(claim, finish)
