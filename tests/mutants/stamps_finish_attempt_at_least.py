"""finish accepts a stamp when the row's attempts is at least the stamp's (attempts >= :attempt):
"the job has had at least the attempts my stamp says".

Every field of the stamp must match the row exactly: a stamp with a lower attempt number (an
earlier claim's, or a forged one) lands. The forged-attempt check forges a higher number, which
this finish rightly rejects, then a lower one, which it accepts."""

from _finish_parts import CONDITIONS, finish_where
from _kit import reference_claim as claim
from _kit import work_once_with

EXPECT_FAIL = {"forged-stamp-attempt"}
MAY_FAIL = {"random-timelines"}  # the same bug, met again on a random timeline
EXPECT_TEXT = {"forged-stamp-attempt": "stamp with attempt=0 (the row says attempts=1) must be"
                                       " rejected"}

finish = finish_where(*("attempts >= :attempt" if c == "attempts = :attempt" else c
                        for c in CONDITIONS))
work_once = work_once_with(claim, finish)
