"""finish compares the owner with LIKE: case-insensitive, and % or _ in a name match anyone.

LIKE is a pattern match, not an equality: a worker named "%" finishes every worker's job, and
"a" finishes "A"'s."""

from _finish_parts import CONDITIONS, finish_where
from _kit import reference_claim as claim
from _kit import work_once_with

EXPECT_FAIL = {"random-timelines",
               "forged-stamp-owner"}  # the holder's own name in another case: LIKE takes it
EXPECT_TEXT = {"random-timelines": "Came back: True"}

finish = finish_where(*(c.replace("owner = :owner", "owner LIKE :owner") for c in CONDITIONS))
work_once = work_once_with(claim, finish)
