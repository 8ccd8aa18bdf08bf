"""finish accepts a stamp when the row's attempts is at most the stamp's (attempts <= :attempt):
"the job has not been tried more often than my stamp says".

Every field of the stamp must match the row exactly: a stamp with a higher attempt number (one
the queue never handed out) lands. The forged-attempt check's first forgery, a higher number,
catches it."""

from _finish_parts import CONDITIONS, finish_where
from _kit import reference_claim as claim
from _kit import work_once_with

LIGHT = True  # a variant: graded here and in drawn worlds, not by the parity and the sweep
EXPECT_FAIL = {"forged-stamp-attempt"}
MAY_FAIL = {"random-timelines"}  # the same bug, met again on a random timeline
EXPECT_TEXT = {"forged-stamp-attempt": "stamp with attempt=2 (the row says attempts=1) must be"
                                       " rejected"}

finish = finish_where(*("attempts <= :attempt" if c == "attempts = :attempt" else c
                        for c in CONDITIONS))
work_once = work_once_with(claim, finish)
