"""finish does not require status 'leased': a second finish with the same stamp lands again.

A done row still matches the stamp in every field until its lease runs out, so a resent finish
lands again."""

from _finish_parts import finish_without
from _kit import reference_claim as claim
from _kit import work_once_with

EXPECT_FAIL = {"double-finish-rejected", "finish-on-quarantined-rejected"}
MAY_FAIL = {"random-timelines"}  # the same bug, met again on a random timeline

finish = finish_without("status = 'leased'")
work_once = work_once_with(claim, finish)
