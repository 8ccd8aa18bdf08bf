"""finish compares the owner with `COLLATE NOCASE`: the holder's name in another letter case
("a" for "A") finishes the holder's job.

Names are compared exactly, as SQLite's `=` compares text. Found by a blind set written from the
contract alone: forged-stamp-owner forged another worker's name only; it now forges the
holder's own name in another case too."""

from _finish_parts import CONDITIONS, finish_where
from _kit import reference_claim as claim
from _kit import work_once_with

EXPECT_FAIL = {"forged-stamp-owner"}
MAY_FAIL = {"random-timelines"}  # the same comparison, met with a forged name of another case
EXPECT_TEXT = {"forged-stamp-owner": "Came back: True"}

finish = finish_where(*(c.replace("owner = :owner", "owner = :owner COLLATE NOCASE")
                        for c in CONDITIONS))
work_once = work_once_with(claim, finish)
