"""finish compares the owner with `GLOB` (case-sensitive, unlike LIKE, but a pattern all the same).

A blind instructor's bug: `owner GLOB :owner` makes the stamp's owner a pattern, so a stamp
whose owner is `A*` finishes A's job, and a worker named `w[1]` cannot finish its own. Caught
by forged-stamp-owner's third forgery (the holder's first letter and `*`) and by the random
timelines' names (`*`, `[c]`, `?`)."""

from _finish_parts import CONDITIONS, finish_where
from _kit import reference_claim as claim
from _kit import work_once_with

EXPECT_FAIL = {"forged-stamp-owner", "random-timelines"}

finish = finish_where(*(("owner GLOB :owner" if c == "owner = :owner" else c)
                        for c in CONDITIONS))
work_once = work_once_with(claim, finish)
