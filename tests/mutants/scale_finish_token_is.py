"""finish compares the stamp's token and attempt with the row's by identity (`is`), not by
value.

Python keeps one object for each small integer (up to 256) only: past that, equal numbers read
from the database and from the Claim are different objects, and the holder's own finish is
rejected."""

from _finish_parts import finish_by_identity
from _kit import reference_claim as claim
from _kit import work_once_with

EXPECT_FAIL = {"lowest-id-first", "random-timelines"}
EXPECT_TEXT = {"lowest-id-first": "never with is"}


finish = finish_by_identity("token", "attempt")
work_once = work_once_with(claim, finish)
