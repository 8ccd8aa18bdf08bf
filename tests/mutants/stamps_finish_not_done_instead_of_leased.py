"""finish asks for status != 'done' instead of status = 'leased'.

It refuses a second finish, so it looks right; but a job an operator quarantined during the
lease still matches the holder's stamp in every other field, and the holder's finish marks it
done behind the operator's back."""

from _finish_parts import CONDITIONS, finish_where
from _kit import reference_claim as claim
from _kit import work_once_with

EXPECT_FAIL = {"finish-on-quarantined-rejected"}
MAY_FAIL = {"random-timelines"}  # the same bug, met again on a random timeline
EXPECT_TEXT = {"finish-on-quarantined-rejected": "only a leased row may be finished"}

finish = finish_where(*(c.replace("status = 'leased'", "status <> 'done'") for c in CONDITIONS))
work_once = work_once_with(claim, finish)
