"""finish compares the stamp's attempt with the row's by identity (`is`), the token by value.

Python keeps one object for each small integer (up to 256) only: once a job has been tried
more than 256 times (max_attempts allows it), equal attempt counts read from the database and
from the Claim are different objects, and the holder's own finish is rejected."""

from _finish_parts import finish_by_identity
from _kit import reference_claim as claim
from _kit import work_once_with

# the class scale_finish_token_is carries through every suite, in the other counter
LIGHT = True
EXPECT_FAIL = {"lowest-id-first", "random-timelines"}
EXPECT_TEXT = {"lowest-id-first": "never with is"}


finish = finish_by_identity("attempt")
work_once = work_once_with(claim, finish)
