"""finish accepts a stamp when the row's token is at most the stamp's (token <= :token): "the row
has not moved on past my generation".

Only equality tells generations apart: a stamp that claims a later generation than the row's
(forged, or left from another database) must be rejected as surely as an earlier one."""

from _finish_parts import CONDITIONS, finish_where
from _kit import reference_claim as claim
from _kit import work_once_with

LIGHT = True  # a variant: graded here and in drawn worlds, not by the parity and the sweep
EXPECT_FAIL = {"forged-stamp-token"}
MAY_FAIL = {"random-timelines"}  # the same bug, met again on a random timeline
EXPECT_TEXT = {"forged-stamp-token": "must be rejected: it is not the lease's current generation"}

finish = finish_where(*("token <= :token" if c == "token = :token" else c for c in CONDITIONS))
work_once = work_once_with(claim, finish)
