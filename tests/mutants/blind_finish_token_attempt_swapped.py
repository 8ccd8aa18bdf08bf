"""finish binds the stamp's token and attempt to each other's column (token = :attempt,
attempts = :token).

A typo that stays invisible while token and attempts are equal, as they are until a job is
requeued: from then on (the token kept, attempts back to 0) the holder's honest finish is
rejected."""

from _finish_parts import CONDITIONS, finish_where
from _kit import reference_claim as claim
from _kit import work_once_with

EXPECT_FAIL = {"random-timelines"}
EXPECT_TEXT = {"random-timelines": "Came back: False"}
# issue 38: every call is also held to the contract's rules after it (no transaction or
# statement left open, every row as the model makes it), at the domain's sizes
MAY_FAIL = {'lowest-id-first'}

SWAPPED = {"token = :token": "token = :attempt", "attempts = :attempt": "attempts = :token"}
finish = finish_where(*(SWAPPED.get(c, c) for c in CONDITIONS))
work_once = work_once_with(claim, finish)
