"""finish compares owners after trimming spaces: worker " A" can finish worker "A"'s job.

Tidying names looks harmless, but names are identities compared exactly: "A " and "A" are two
workers."""

from _finish_parts import CONDITIONS, finish_where
from _kit import reference_claim as claim
from _kit import work_once_with

EXPECT_FAIL = {"random-timelines"}
EXPECT_TEXT = {"random-timelines": "Came back: True"}

finish = finish_where(*(c.replace("owner = :owner", "TRIM(owner) = TRIM(:owner)")
                        for c in CONDITIONS))
work_once = work_once_with(claim, finish)
